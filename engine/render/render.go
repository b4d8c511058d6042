// Package render shows what the model will see (docs/review.md): every
// model round a prompt's run would make, with the exact request the engine
// would send (system text, messages, the tools with their descriptions and
// schemas, the model), its tokens and its cost, without calling a model or
// a tool.
//
// It renders by running the engine (engine/session, engine/run) with a
// symbolic gateway client that never reaches a network: each chat request
// is recorded byte for byte as the engine encodes it and answered with a
// named slot (⟨reply of ## Research⟩) and no tool calls, so no tool ever
// runs. What the run does not know before it starts shows as a slot: the
// run input (⟨args⟩, unless one is given) and every model reply, wherever
// Lua carries it. The rendered requests are the engine's by construction;
// where Lua needs a reply's actual value (json.decode of a reply, a
// branch on its content that fails), the run stops and the result says
// where and why.
package render

import (
	"bytes"
	"context"
	"errors"
	"sort"
	"strings"

	"github.com/forge-lsp/forge-lsp/engine/gateway"
	"github.com/forge-lsp/forge-lsp/engine/run"
	"github.com/forge-lsp/forge-lsp/engine/session"
	"github.com/forge-lsp/forge-lsp/engine/toolrule"
)

// Slot markers. A slot is text the run does not know before it starts.
const (
	SlotOpen  = "⟨"
	SlotClose = "⟩"
	// ArgsSlot stands for the run input when none is given.
	ArgsSlot = SlotOpen + "args" + SlotClose
	// ExecutionSlot is sys.execution (an id each run draws).
	ExecutionSlot = SlotOpen + "execution" + SlotClose
	// SyntheticModel is the model id of rounds rendered without a
	// catalog: every models.bind resolves to it.
	SyntheticModel = SlotOpen + "model" + SlotClose
)

// renderNonce pins the envelope nonce, so that two renders of a prompt
// compare equal.
const renderNonce = "00000000000000000000000000000000"

// Options says what to render.
type Options struct {
	// Path names the prompt in messages; Source is its text.
	Path   string
	Source []byte
	// Section, when set ("## Name"), renders the H1 and that section
	// only, as `run --section` runs them.
	Section string
	// Input is the run input; nil shows it as the slot ⟨args⟩.
	Input *string
	// Catalog is the model catalog; nil reads GatewayFile's, and without
	// one every model binding resolves to SyntheticModel.
	Catalog []gateway.Model
	// GatewayFile is a gateway file (docs/gateway.md) whose [[model]]s
	// are the catalog, with their prices. It is opened in-process; no
	// request leaves the machine.
	GatewayFile string
	// ToolsFile and ToolsDir choose the workspace tools file as a run
	// does (session.Options).
	ToolsFile, ToolsDir string
	// Env resolves the gateway file's ${VAR}s; nil means none are set.
	Env gateway.LookupFunc
}

// Result is a rendered prompt.
type Result struct {
	Path    string `json:"path"`
	Section string `json:"section,omitempty"`
	// Rounds are the model rounds in the order the run makes them.
	Rounds []*Round `json:"rounds"`
	// Stopped says why the run ended before the prompt's end (empty when
	// it ran through); StoppedLine is the prompt line, 0 when unknown.
	Stopped     string `json:"stopped,omitempty"`
	StoppedLine int    `json:"stopped_line,omitempty"`
	// Synthetic is true when no catalog was configured: the model of
	// every round is SyntheticModel and context and prices are unknown.
	Synthetic bool `json:"synthetic_catalog,omitempty"`
	// Tokens and Cost are the whole run's input tokens and cost; Cost is
	// nil unless every round's model has prices.
	Tokens Tokens `json:"tokens"`
	Cost   *Cost  `json:"cost,omitempty"`
}

// Round is one model round.
type Round struct {
	// N is the round's 1-based position in the run.
	N int `json:"n"`
	// Section is the address of the section that sends it ("## Gather",
	// "# Title" for the H1); Arm is its 1-based fanout arm, 0 outside
	// fanout; Depth its execute/fanout depth.
	Section string `json:"section"`
	Arm     int    `json:"arm,omitempty"`
	Depth   int    `json:"depth,omitempty"`
	// Line is the prose block's prompt line (the models.infer call's for
	// Infer); Round the 1-based round within the block.
	Line  int  `json:"line,omitempty"`
	Round int  `json:"round"`
	Infer bool `json:"infer,omitempty"`
	// Request is the request as the engine sends it; Body its exact
	// bytes on the wire.
	Request gateway.Request `json:"request"`
	Body    string          `json:"-"`
	// Reply is the slot the round was answered with.
	Reply string `json:"reply"`
	// Model is the catalog entry of Request.Model, nil when unknown.
	Model  *gateway.Model `json:"model_info,omitempty"`
	Tokens Tokens         `json:"tokens"`
	Cost   *Cost          `json:"cost,omitempty"`
	// Note says what the round's rendering cannot show (the loop's later
	// rounds with tool results).
	Note string `json:"note,omitempty"`
	// OverContext is set when the round's known part alone exceeds its
	// model's context: the run would fail or be cut there whatever the
	// replies are.
	OverContext bool `json:"over_context,omitempty"`
}

// Render renders a prompt. Its error is a prompt that cannot run at all
// (not a prompt, parse errors, an unknown section, an unreadable tools or
// gateway file); a run that stops midway is a Result with Stopped set.
func Render(ctx context.Context, opts Options) (*Result, error) {
	cat := opts.Catalog
	if cat == nil && opts.GatewayFile != "" {
		env := opts.Env
		if env == nil {
			env = func(string) (string, bool) { return "", false }
		}
		var err error
		if cat, err = fileCatalog(ctx, opts.GatewayFile, env); err != nil {
			return nil, err
		}
	}
	res := &Result{Path: opts.Path, Section: opts.Section, Synthetic: cat == nil}
	if res.Synthetic {
		// First the words of the lines that bind models (cheap, and all
		// a literal description needs), then, if a binding found no
		// model, every word of the prompt.
		cat = []gateway.Model{syntheticModel(bindingLines(opts.Source))}
	}
	sym, rerr, err := symbolicRun(ctx, opts, cat, res.Synthetic)
	if err != nil {
		return nil, err
	}
	if re := run.AsRunError(rerr); res.Synthetic && re != nil && strings.HasPrefix(re.Variant, "Model") && re.Variant != "ModelRequired" {
		cat = []gateway.Model{syntheticModel(opts.Source)}
		if sym, rerr, err = symbolicRun(ctx, opts, cat, true); err != nil {
			return nil, err
		}
	}
	res.Rounds = sym.rounds
	if rerr != nil {
		var re *run.RunError
		if errors.As(rerr, &re) {
			res.StoppedLine = re.Line
		}
		res.Stopped = rerr.Error()
		if len(res.Rounds) > 0 {
			res.Stopped += " (render answers every model round with a slot; where a step needs a reply's actual value, the rendering stops there)"
		}
	}
	byID := map[string]*gateway.Model{}
	for i := range cat {
		byID[cat[i].ID] = &cat[i]
	}
	account(res, byID)
	return res, nil
}

// symbolicRun runs the prompt once against the symbolic gateway; err is a
// prompt that cannot run at all, runErr the run's own failure.
func symbolicRun(ctx context.Context, opts Options, cat []gateway.Model, synthetic bool) (sym *symbolic, runErr, err error) {
	var picker *toolrule.PickerConfig
	if synthetic {
		// One model that every description names: any shared word binds.
		picker = &toolrule.PickerConfig{SimilarityFloor: 1e-9, SoloFloor: 1e-9, Margin: 0, DuplicateThreshold: 2, TopK: 2}
	}
	sym = newSymbolic()
	input := ArgsSlot
	if opts.Input != nil {
		input = *opts.Input
	}
	env := opts.Env
	if env == nil {
		env = func(string) (string, bool) { return "", false }
	}
	client := gateway.New(gateway.Config{BaseURL: "http://render.invalid/v1", Transport: sym, Retries: -1, Source: "render"})
	s, err := session.Open(session.Options{
		Path: opts.Path, Source: opts.Source, Section: opts.Section, Input: input,
		Observer: sym, Client: client, ModelCatalog: cat, ModelPicker: picker,
		ToolsFile: opts.ToolsFile, ToolsDir: opts.ToolsDir, Env: env,
		Execution: ExecutionSlot, Nonce: renderNonce,
		// Arms one after another: rounds come in a fixed order and each
		// request is answered for the entry that sends it.
		Limits: run.Limits{FanoutConcurrency: 1},
	})
	if err != nil {
		return nil, nil, err
	}
	defer s.Close()
	_, runErr = s.Run(ctx)
	return sym, runErr, nil
}

// bindingLines is the lines of src that mention models. (the calls that
// bind models, with their literal descriptions).
func bindingLines(src []byte) []byte {
	var out []byte
	for _, line := range bytes.SplitAfter(src, []byte("\n")) {
		if bytes.Contains(line, []byte("models.")) {
			out = append(out, line...)
		}
	}
	return out
}

// fileCatalog is the catalog a gateway file serves, read in-process as
// every host fetches a catalog (session.Gateway.Models).
func fileCatalog(ctx context.Context, path string, env gateway.LookupFunc) ([]gateway.Model, error) {
	return session.Gateway{File: path}.Models(ctx, env)
}

// syntheticModel is the one model of a render without a catalog: its
// description holds every word of the prompt, so that each models.bind
// description shares a word with it.
func syntheticModel(src []byte) gateway.Model {
	seen := map[string]bool{}
	var words []string
	for _, w := range toolrule.Tokens(string(src)) {
		if !seen[w] {
			seen[w] = true
			words = append(words, w)
		}
	}
	sort.Strings(words)
	if len(words) == 0 {
		words = []string{"model"}
	}
	return gateway.Model{ID: SyntheticModel, Description: strings.Join(words, " "), Thinking: gateway.DefaultThinking, ToolDialect: gateway.DefaultToolDialect}
}

// SectionAddress is how a round names its section: the address, or
// "# Title" for the H1.
func sectionAddress(ev run.SectionEvent) string {
	if ev.Address != "" {
		return ev.Address
	}
	return "# " + ev.Name
}
