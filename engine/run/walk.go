package run

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/forge-lsp/forge-lsp/engine/api"
	"github.com/forge-lsp/forge-lsp/engine/rules"

	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/sandbox"
	"github.com/forge-lsp/forge-lsp/engine/store"
	lua "github.com/yuin/gopher-lua"
)

// runner is one run in progress.
type runner struct {
	p *parse.Prompt
	// cfg is the Config the host passed to Run, not copied again.
	cfg    *Config
	limits Limits
	obs    Observer
	// hook is obs when it is a Hook (traces, the debugger), else nil.
	hook  Hook
	store *store.Store
	// nonce is the run's envelope nonce (32 lowercase hex digits).
	nonce     string
	nextID    atomic.Int64
	entries   atomic.Int64
	walkStart time.Time
	budget    *sandbox.Budget

	// tools and models hold the per-run state of the tools and models
	// APIs (defined in tools_api.go and models_api.go).
	tools  toolRun
	models modelRun
}

func (r *runner) now() time.Time {
	if r.cfg.Now != nil {
		return r.cfg.Now()
	}
	return time.Now()
}

// Run runs a whole prompt (docs/language.md#running-a-prompt): the H1 pass
// once, then the walk. It returns the final result or a *RunError. It
// validates p first (Validate); a host that validated it already runs
// the result (Valid.Run).
func Run(ctx context.Context, p *parse.Prompt, cfg Config) (string, error) {
	v, err := Validate(p)
	if err != nil {
		return "", err
	}
	return v.Run(ctx, cfg)
}

// Run runs the validated prompt as Run does, without validating it again.
func (v *Valid) Run(ctx context.Context, cfg Config) (res string, err error) {
	defer recoverInternal(&err)
	r, err := start(v.p, &cfg)
	if err != nil {
		return "", err
	}
	defer r.budget.Stop()
	ctx = r.budget.Bind(ctx)
	res, err = r.runWhole(ctx)
	return res, r.finish(ctx, err)
}

// recoverInternal turns a panic (a bug, never user input) into an
// Internal error instead of taking the host process down.
func recoverInternal(err *error) {
	if p := recover(); p != nil {
		*err = &RunError{Kind: KindInternal, Msg: fmt.Sprintf("internal error: %v", p)}
	}
}

// RunSection runs the H1 pass and then sec alone
// (docs/language.md#running-one-section): `run --section`, the editor's
// Run section and Debug section, and a test case's section all call it.
// The section starts with reply nil and the H1's var; its own jumps (a
// child walk, or the walk from a sibling target) and executes run as in
// the walk, but falling through past sec (or past its child walk) ends the
// run instead of entering the next sibling. The result is the value
// returned, else the final reply, else "done".
func RunSection(ctx context.Context, p *parse.Prompt, sec *parse.Section, cfg Config) (string, error) {
	v, err := Validate(p)
	if err != nil {
		return "", err
	}
	return v.RunSection(ctx, sec, cfg)
}

// RunSection runs the H1 pass and then sec alone, as RunSection does,
// without validating the prompt again.
func (v *Valid) RunSection(ctx context.Context, sec *parse.Section, cfg Config) (res string, err error) {
	defer recoverInternal(&err)
	r, err := start(v.p, &cfg)
	if err != nil {
		return "", err
	}
	defer r.budget.Stop()
	if sec == nil {
		return "", &RunError{Kind: KindInternal, Msg: "no section to run"}
	}
	ctx = r.budget.Bind(ctx)
	res, err = r.runSection(ctx, sec)
	return res, r.finish(ctx, err)
}

// Valid is a prompt that passed Validate: it parsed without error and
// declares a version this build runs. Its Run and RunSection do not
// validate it again, so a host that must refuse a prompt before it runs
// (engine/session) validates it once on the way to the run's first
// request.
type Valid struct{ p *parse.Prompt }

// Prompt is the validated prompt.
func (v *Valid) Prompt() *parse.Prompt { return v.p }

// validateHook, when set, sees every Validate (SetValidateHook).
var validateHook atomic.Pointer[func(*parse.Prompt)]

// SetValidateHook makes f see every prompt Validate is called on, until
// restore is called. Tests count validations with it (a run validates
// its prompt once); f must be safe for concurrent use.
func SetValidateHook(f func(*parse.Prompt)) (restore func()) {
	old := validateHook.Swap(&f)
	return func() { validateHook.Store(old) }
}

// Validate checks what a run needs of a prompt before anything runs
// (docs/language.md#run-entry): no parse error (the first one is the
// error, kind Parse, or Lua for Lua syntax), a promptforge version, and
// major version 1 (kind Version otherwise).
func Validate(p *parse.Prompt) (*Valid, error) {
	if h := validateHook.Load(); h != nil && *h != nil {
		(*h)(p)
	}
	if p == nil {
		return nil, &RunError{Kind: KindInternal, Msg: "no prompt"}
	}
	for _, e := range p.Errors {
		kind := KindParse
		if e.Code == parse.CodeLuaSyntax {
			kind = KindLua
		}
		line := 0
		if p.File != nil {
			line = p.File.Line(e.Span.Start)
		}
		return nil, &RunError{Kind: kind, Msg: e.Message, Line: line, Cause: e}
	}
	if p.Frontmatter == nil || p.Frontmatter.Version == nil {
		return nil, &RunError{Kind: KindParse, Msg: "not a promptforge prompt: no promptforge version", Line: 1}
	}
	if v := *p.Frontmatter.Version; v != 1 {
		msg := fmt.Sprintf("unsupported promptforge version: %d (this build supports major 1)", v)
		if o, ok := api.LookupOld(fmt.Sprintf("promptforge: %d", v)); ok {
			msg += "; " + api.OldMessage(o)
		}
		return nil, &RunError{Kind: KindVersion, Msg: msg, Line: 1}
	}
	return &Valid{p: p}, nil
}

// start prepares a runner for a validated prompt
// (docs/language.md#run-entry).
func start(p *parse.Prompt, cfg *Config) (*runner, error) {
	r := &runner{p: p, cfg: cfg, limits: cfg.Limits.WithDefaults(), obs: cfg.Observer, store: cfg.Store}
	if r.obs == nil {
		r.obs = nopObserver{}
	}
	r.hook, _ = r.obs.(Hook)
	if r.store == nil {
		r.store = store.New()
	}
	r.store.SetLimits(r.limits.StoreFileBytes, r.limits.StoreTotalBytes)
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, &RunError{Kind: KindInternal, Msg: "cannot create the run nonce: " + err.Error(), Cause: err}
	}
	r.nonce = hex.EncodeToString(b[:])
	if r.cfg.Nonce != "" {
		r.nonce = r.cfg.Nonce
	}
	if err := r.initTools(); err != nil {
		return nil, AsRunError(err)
	}
	if err := r.initModels(); err != nil {
		return nil, AsRunError(err)
	}
	r.budget = sandbox.NewBudget(r.limits.budget())
	return r, nil
}

// finish normalises the final error: a tripped run budget wins (the run
// ended on it, whatever the VMs made of the ended context), then a
// cancelled context, and every error is a *RunError.
func (r *runner) finish(ctx context.Context, err error) error {
	defer r.budget.Stop()
	if err == nil {
		return nil
	}
	if q := r.budget.Quota(); q != nil {
		if re, ok := err.(*RunError); ok && re.Kind == KindQuota {
			return re
		}
		return &RunError{Kind: KindQuota, Variant: "LuaQuota", Msg: q.Error(), Cause: q, Line: AsRunError(err).Line}
	}
	if ctx.Err() != nil {
		if re, ok := err.(*RunError); ok && re.Kind == KindCancelled {
			return re
		}
		return errCancelled(err)
	}
	return AsRunError(err)
}

func (r *runner) runWhole(ctx context.Context) (string, error) {
	res, ended, last, vars, err := r.h1(ctx)
	if err != nil || ended {
		return res, err
	}
	if len(r.p.Sections) == 0 {
		if last != nil {
			return *last, nil
		}
		return "done", nil
	}
	if err := r.afterH1Tools(ctx); err != nil {
		return "", err
	}
	r.walkStart = r.now()
	st := &walkState{vars: vars}
	out, err := r.walk(ctx, &frame{}, r.p.Sections, 0, false, st)
	if err != nil {
		return "", err
	}
	return st.result(out, "done"), nil
}

func (r *runner) runSection(ctx context.Context, sec *parse.Section) (string, error) {
	res, ended, _, vars, err := r.h1(ctx)
	if err != nil || ended {
		return res, err
	}
	if err := r.afterH1Tools(ctx); err != nil {
		return "", err
	}
	r.walkStart = r.now()
	st := &walkState{vars: vars}
	out, err := r.walkOne(ctx, &frame{}, sec, st)
	if err != nil {
		return "", err
	}
	return st.result(out, "done"), nil
}

// walkOne is the walk of docs/language.md#running-one-section: sec runs
// (even when off-walk) and the walk ends where sec ends. A jump to a child
// runs the child walk and then ends; a jump to a sibling continues the
// walk there, as a jump does.
func (r *runner) walkOne(ctx context.Context, fr *frame, sec *parse.Section, st *walkState) (outcome, error) {
	out, err := r.enter(ctx, fr, sec, st)
	if err != nil || out.kind == outReturned {
		return out, err
	}
	st.reply = out.reply
	if out.kind == outFell {
		return outcome{kind: outFell, reply: st.reply}, nil
	}
	t := out.target
	if t.Parent == sec {
		return r.walk(ctx, fr, sec.Children, indexOf(sec.Children, t), true, st)
	}
	sl := parse.Siblings(r.p, t)
	return r.walk(ctx, fr, sl, indexOf(sl, t), true, st)
}

// h1 runs the H1 pass (docs/language.md#h1-pass). ended is true when a scalar
// return ended the run with res; last is the last H1 model reply; vars seeds
// the walk.
func (r *runner) h1(ctx context.Context) (res string, ended bool, last *string, vars *node, err error) {
	vars = &node{}
	r.walkStart = r.now()
	line := 0
	if r.p.H1 != nil && r.p.File != nil {
		line = r.p.File.Line(r.p.H1.Span.Start)
	}
	ev := SectionEvent{ID: 0, Name: r.p.Title, Line: line}
	vm, err := r.newVM(ctx, vmH1, nil, &frame{}, 0, vars, nil)
	if err != nil {
		return "", false, nil, nil, err
	}
	defer vm.close()
	r.obs.SectionEnter(ev)
	defer func() {
		ev.Reply, ev.Err = last, err
		r.obs.SectionExit(ev)
	}()
	if err := vm.pause(PointSection, nil, ""); err != nil {
		return "", false, nil, nil, err
	}
	first := true
	for _, b := range r.p.H1Blocks {
		if ctx.Err() != nil {
			return "", false, nil, nil, errCancelled(ctx.Err())
		}
		if b.Kind == parse.LuaBlock {
			if err := vm.pause(PointLua, b, ""); err != nil {
				return "", false, nil, nil, err
			}
			ret, cerr := vm.runChunk(b.Chunk)
			// Typed binding errors win even when Lua caught them.
			if terr := r.takeToolBindingError(vm); terr != nil {
				return "", false, nil, nil, terr
			}
			if merr := r.takeModelBindingError(vm); merr != nil {
				return "", false, nil, nil, merr
			}
			if cerr != nil {
				return "", false, nil, nil, h1Error(cerr, b.Chunk)
			}
			s, ok, serr := scalarString(ret)
			if serr != nil {
				return "", false, nil, nil, vm.returnErr(b.Chunk, serr)
			}
			if ok {
				return s, true, nil, nil, nil
			}
			continue
		}
		step := &ProseStep{Prose: b.Prose, First: first, LoopCapable: b.Prose.LoopCapable}
		first = false
		reply, perr := vm.prose(ctx, step, last, b)
		if perr != nil {
			return "", false, nil, nil, perr
		}
		last = reply
	}
	if err := vm.checkVarGlobal(); err != nil {
		return "", false, nil, nil, err
	}
	return "", false, last, vars, nil
}

// h1Error applies the H1 rule of docs/language.md#errors: a live H1 block
// wraps whatever its chunk raised into a plain Lua error, so a budget hit in
// H1 is kind Lua (its text still names the budget). Cancellation is restored
// at the run level by finish.
func h1Error(e error, c *parse.Chunk) *RunError {
	err := AsRunError(e)
	if err.Kind != KindQuota || err.Variant != "LuaQuota" {
		return err
	}
	msg := err.Msg
	if q, ok := err.Cause.(*sandbox.QuotaError); ok {
		msg = q.Phrase()
		if q.Resource == sandbox.ResMemory {
			msg = q.Error()
		}
	}
	where := ""
	if err.Line > 0 {
		msg = fmt.Sprintf("%s:%d: %s", c.Label, err.Line, msg)
		where = c.Label
	}
	return &RunError{Kind: KindLua, Variant: "LuaRuntime", Msg: msg, Line: err.Line, Where: where, Cause: err}
}

// prose runs one prose block (docs/language.md#section-blocks) and returns
// the new rolling reply.
func (vm *VM) prose(ctx context.Context, step *ProseStep, rolling *string, b *parse.Block) (*string, error) {
	r := vm.r
	if err := r.beforeProse(ctx, vm, step); err != nil {
		return rolling, r.atProse(err, step)
	}
	if err := vm.checkVarGlobal(); err != nil {
		return rolling, err
	}
	text, err := vm.render(step.Prose, rolling)
	if err != nil {
		return rolling, err
	}
	if strings.TrimSpace(text) == "" {
		return rolling, nil
	}
	if err := vm.pause(PointProse, b, text); err != nil {
		return rolling, err
	}
	res, err := r.runProse(ctx, vm, step, text)
	if err != nil {
		return rolling, r.atProse(err, step)
	}
	if res.Text != nil {
		t, err := vm.pauseText(PointReply, b, *res.Text)
		if err != nil {
			return rolling, err
		}
		vm.L.SetGlobal("reply", lua.LString(t))
		return &t, nil
	}
	return rolling, nil
}

// atProse gives err, when it has no line, the prose block's first line.
func (r *runner) atProse(err error, step *ProseStep) error {
	if re, ok := err.(*RunError); ok && re.Line == 0 && r.p.File != nil {
		re.Line = r.p.File.Line(step.Prose.Span.Start)
	}
	return err
}

type outKind int

const (
	outFell outKind = iota
	outReturned
	outJumped
)

// outcome is how a section entry ended.
type outcome struct {
	kind   outKind
	value  string
	reply  *string
	target *parse.Section
}

// walkState is what a walk carries between entries.
type walkState struct {
	vars  *node
	reply *string
	// jumped marks the next entry as a jump's target (SectionEvent.Jump).
	jumped bool
}

// result is what a walk that ended with out gives: the returned value,
// else the last reply, else none.
func (st *walkState) result(out outcome, none string) string {
	if out.kind == outReturned {
		return out.value
	}
	if st.reply != nil {
		return *st.reply
	}
	return none
}

// walk runs slice from start with fall-through (docs/language.md#the-walk,
// docs/language.md#jump). forced makes the first section run even when it is
// off-walk (jump and execute targets).
func (r *runner) walk(ctx context.Context, fr *frame, slice []*parse.Section, start int, forced bool, st *walkState) (outcome, error) {
	i := start
	for i < len(slice) {
		s := slice[i]
		if s.OffWalk && !forced {
			i++
			continue
		}
		forced = false
		out, err := r.enter(ctx, fr, s, st)
		if err != nil {
			return outcome{}, err
		}
		switch out.kind {
		case outReturned:
			return out, nil
		case outFell:
			st.reply = out.reply
			i++
		case outJumped:
			st.reply = out.reply
			st.jumped = true
			t := out.target
			if t.Parent == s {
				// A child walk over the jumper's children, then the
				// parent walk goes on after the jumper.
				cout, err := r.walk(ctx, fr, s.Children, indexOf(s.Children, t), true, st)
				if err != nil {
					return outcome{}, err
				}
				if cout.kind == outReturned {
					return cout, nil
				}
				i++
				continue
			}
			j := indexOf(slice, t)
			if j < 0 {
				return outcome{}, &RunError{Kind: KindInternal, Msg: "jump target " + t.Address() + " is not in the walk"}
			}
			i, forced = j, true
		}
	}
	return outcome{kind: outFell, reply: st.reply}, nil
}

func indexOf(ss []*parse.Section, s *parse.Section) int {
	for i, x := range ss {
		if x == s {
			return i
		}
	}
	return -1
}

// sectionLine is the heading's file line.
func (r *runner) sectionLine(s *parse.Section) int {
	if s == nil || s.Heading == nil || r.p.File == nil {
		return 0
	}
	return r.p.File.Line(s.Heading.Span.Start)
}

// enter runs one section entry in a fresh VM.
func (r *runner) enter(ctx context.Context, fr *frame, s *parse.Section, st *walkState) (out outcome, err error) {
	if ctx.Err() != nil {
		return outcome{}, errCancelled(ctx.Err())
	}
	if q := r.budget.Quota(); q != nil {
		return outcome{}, &RunError{Kind: KindQuota, Variant: "LuaQuota", Msg: q.Error(), Cause: q, Line: r.sectionLine(s)}
	}
	if n := r.entries.Add(1); n > int64(r.limits.MaxSectionEntries) {
		return outcome{}, &RunError{Kind: KindQuota, Variant: "SectionEntries", Line: r.sectionLine(s),
			Msg: fmt.Sprintf("section entry quota exceeded: the run entered more than %d sections (jumps included); is there a jump loop?", r.limits.MaxSectionEntries)}
	}
	id := r.nextID.Add(1)
	ev := SectionEvent{ID: id, Name: s.Name, Address: s.Address(), Line: r.sectionLine(s), Depth: fr.depth, Chain: fr.chainInput != nil, Parent: fr.parent, Jump: st.jumped}
	st.jumped = false
	r.obs.SectionEnter(ev)
	defer func() {
		ev.Reply, ev.Err = out.reply, err
		if out.kind == outReturned {
			v := out.value
			ev.Reply = &v
		}
		r.obs.SectionExit(ev)
	}()
	vm, err := r.newVM(ctx, vmSection, s, fr, id, st.vars, st.reply)
	if err != nil {
		return outcome{}, err
	}
	defer vm.close()
	return vm.runBlocks(ctx, st.reply)
}

// runBlocks is the block walk of a section or arm VM
// (docs/language.md#section-blocks).
func (vm *VM) runBlocks(ctx context.Context, incoming *string) (outcome, error) {
	vm.startReply = incoming
	rolling := incoming
	first := true
	if err := vm.pause(PointSection, nil, ""); err != nil {
		return outcome{}, err
	}
	for _, b := range vm.Section.Blocks {
		if ctx.Err() != nil {
			return outcome{}, errCancelled(ctx.Err())
		}
		if b.Kind == parse.LuaBlock {
			if err := vm.pause(PointLua, b, ""); err != nil {
				return outcome{}, err
			}
			ret, err := vm.runChunk(b.Chunk)
			if vm.jumpTarget != nil {
				rg, rerr := vm.replyGlobal(b.Chunk)
				if rerr != nil {
					return outcome{}, rerr
				}
				if err := vm.checkVarGlobal(); err != nil {
					return outcome{}, err
				}
				return outcome{kind: outJumped, target: vm.jumpTarget, reply: rg}, nil
			}
			if err != nil {
				return outcome{}, err
			}
			s, ok, serr := scalarString(ret)
			if serr != nil {
				return outcome{}, vm.returnErr(b.Chunk, serr)
			}
			if ok {
				if err := vm.checkVarGlobal(); err != nil {
					return outcome{}, err
				}
				return outcome{kind: outReturned, value: s}, nil
			}
			rg, rerr := vm.replyGlobal(b.Chunk)
			if rerr != nil {
				return outcome{}, rerr
			}
			rolling = rg
			continue
		}
		step := &ProseStep{Prose: b.Prose, First: first, LoopCapable: b.Prose.LoopCapable}
		first = false
		var err error
		if rolling, err = vm.prose(ctx, step, rolling, b); err != nil {
			return outcome{}, err
		}
	}
	if err := vm.checkVarGlobal(); err != nil {
		return outcome{}, err
	}
	return outcome{kind: outFell, reply: rolling}, nil
}

// replyGlobal reads the `reply` global back
// (docs/language.md#section-blocks).
func (vm *VM) replyGlobal(c *parse.Chunk) (*string, error) {
	switch v := vm.L.GetGlobal("reply").(type) {
	case *lua.LNilType:
		return nil, nil
	case lua.LString:
		s := string(v)
		return &s, nil
	default:
		return nil, vm.chunkErr(c, 0, rules.ReplyValue(ruleValue(v)).Error())
	}
}

// chain runs an execute chain (docs/language.md#execute) over target's slice:
// reply starts nil (or reply, for a jump from an arm), vars is the chain's
// own copy.
func (r *runner) chain(ctx context.Context, fr *frame, target *parse.Section, vars *node, reply *string) (string, error) {
	st := &walkState{vars: vars, reply: reply}
	sl := parse.Siblings(r.p, target)
	out, err := r.walk(ctx, fr, sl, indexOf(sl, target), true, st)
	if err != nil {
		return "", err
	}
	return st.result(out, ""), nil
}
