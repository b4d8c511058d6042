package gatewayd

import (
	"github.com/forge-lsp/forge-lsp/engine/envvar"

	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/pelletier/go-toml/v2"

	"github.com/forge-lsp/forge-lsp/engine/fsread"
	"github.com/forge-lsp/forge-lsp/engine/gateway"
)

// MaxIncludeDepth bounds include nesting (docs/gateway.md#profiles).
const MaxIncludeDepth = 16

// maxFileBytes caps one gateway, profile or .env file.
const maxFileBytes = 1 << 20

// Load reads the gateway file at path with its includes and their
// name-matched .env files, interpolates ${VAR} from env (then the .env
// files) and validates the result (docs/gateway.md#the-file). env nil is
// the process environment.
func Load(path string, env gateway.LookupFunc) (*Config, error) {
	return load(path, env, false)
}

// LoadInProcess is Load for a file served in-process (--gateway-config,
// PROMPTFORGE_GATEWAY_CONFIG): no socket is opened and no client
// authenticates, so the [server] table is ignored, its ${VAR}s need not
// be set, and a file without one is complete (docs/gateway.md).
func LoadInProcess(path string, env gateway.LookupFunc) (*Config, error) {
	return load(path, env, true)
}

func load(path string, env gateway.LookupFunc, inProcess bool) (*Config, error) {
	if env == nil {
		env = os.LookupEnv
	}
	l := &loader{visiting: map[string]bool{}}
	doc, err := l.file(path, 0)
	if err != nil {
		return nil, err
	}
	if inProcess {
		delete(doc, "server")
	}
	dotenv, err := loadDotenv(l.chain)
	if err != nil {
		return nil, err
	}
	lookup := func(k string) (string, bool) {
		if v, ok := env(k); ok {
			return v, true
		}
		for _, m := range dotenv {
			if v, ok := m[k]; ok {
				return v, true
			}
		}
		return "", false
	}
	if err := interpolateTree(doc, lookup, path); err != nil {
		return nil, err
	}
	// The merged tree passed the strict per-file decode already; encoding
	// and decoding it once more gives the typed Config.
	text, err := toml.Marshal(doc)
	if err != nil {
		return nil, &ConfigError{Msg: path + ": cannot merge the included files"}
	}
	var c Config
	if err := toml.NewDecoder(bytes.NewReader(text)).DisallowUnknownFields().Decode(&c); err != nil {
		// Not echoed: the text holds interpolated credentials.
		return nil, &ConfigError{Msg: path + ": the merged files do not form a valid gateway file"}
	}
	if err := c.validate(); err != nil {
		var ce *ConfigError
		if errors.As(err, &ce) {
			ce.Msg = path + ": " + ce.Msg
		}
		return nil, err
	}
	return &c, nil
}

// LoadProfile loads dir/NAME.toml (docs/gateway.md#profiles).
func LoadProfile(dir, name string, env gateway.LookupFunc) (*Config, error) {
	if err := CheckProfileName(name); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, strings.TrimSpace(name)+".toml")
	if _, err := os.Stat(path); err != nil {
		return nil, &ConfigError{Msg: fmt.Sprintf("profile %q not found: no %s (profiles: %s)", name, path, strings.Join(listOrNone(dir), ", "))}
	}
	return Load(path, env)
}

func listOrNone(dir string) []string {
	names, err := ListProfiles(dir)
	if err != nil || len(names) == 0 {
		return []string{"none"}
	}
	return names
}

// CheckProfileName accepts a single path component: not empty, not . or
// .., no separators or NUL.
func CheckProfileName(name string) error {
	n := strings.TrimSpace(name)
	switch {
	case n == "":
		return &ConfigError{Msg: "profile name must not be empty"}
	case n == "." || n == "..":
		return &ConfigError{Msg: "profile name must not be . or .."}
	case strings.ContainsAny(n, "/\\\x00"):
		return &ConfigError{Msg: "profile name must not contain path separators"}
	}
	return nil
}

// ListProfiles returns the sorted *.toml stems of dir; a missing dir has
// none.
func ListProfiles(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, &ConfigError{Msg: "cannot read the profiles directory: " + err.Error()}
	}
	var names []string
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".toml") && e.Type().IsRegular() {
			names = append(names, strings.TrimSuffix(e.Name(), ".toml"))
		}
	}
	sort.Strings(names)
	return names, nil
}

// DefaultProfilesDir is ~/.promptforge/profiles, as upstream.
func DefaultProfilesDir() string {
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(".promptforge", "profiles")
	}
	return filepath.Join(home, ".promptforge", "profiles")
}

type loader struct {
	visiting map[string]bool
	stack    []string
	// chain is every file read, the root first, for the .env files.
	chain []string
}

// file reads one file and its includes depth-first, merging the includes
// first and the file over them.
func (l *loader) file(path string, depth int) (map[string]any, error) {
	if depth > MaxIncludeDepth {
		return nil, &ConfigError{Msg: fmt.Sprintf("%s: include depth exceeds %d", path, MaxIncludeDepth)}
	}
	canon := path
	if abs, err := filepath.Abs(path); err == nil {
		canon = abs
	}
	if real, err := filepath.EvalSymlinks(canon); err == nil {
		canon = real
	}
	if l.visiting[canon] {
		return nil, &ConfigError{Msg: fmt.Sprintf("include cycle at %s (chain: %s)", path, strings.Join(append(l.stack, canon), " -> "))}
	}
	l.visiting[canon] = true
	l.stack = append(l.stack, canon)
	l.chain = append(l.chain, path)
	defer func() {
		delete(l.visiting, canon)
		l.stack = l.stack[:len(l.stack)-1]
	}()
	data, err := readCapped(path)
	if err != nil {
		return nil, err
	}
	// Strict decode first: unknown keys and wrong types are reported with
	// the file, line and column.
	var shape Config
	if err := toml.NewDecoder(bytes.NewReader(data)).DisallowUnknownFields().Decode(&shape); err != nil {
		return nil, tomlError(path, err)
	}
	if len(shape.LocalModels) > 0 || shape.Local != nil {
		return nil, &ConfigError{Msg: path + ": " + (&Config{Local: map[string]any{}}).validate().Error()}
	}
	var doc map[string]any
	if err := toml.Unmarshal(data, &doc); err != nil {
		return nil, tomlError(path, err)
	}
	includes := shape.Include
	delete(doc, "include")
	merged := map[string]any{}
	for _, inc := range includes {
		p := inc
		if !filepath.IsAbs(p) {
			p = filepath.Join(filepath.Dir(path), p)
		}
		if _, err := os.Stat(p); err != nil {
			return nil, &ConfigError{Msg: fmt.Sprintf("%s: include %q not found (%s)", path, inc, p)}
		}
		parent, err := l.file(p, depth+1)
		if err != nil {
			return nil, err
		}
		if err := merge(merged, parent, p); err != nil {
			return nil, err
		}
	}
	if err := merge(merged, doc, path); err != nil {
		return nil, err
	}
	return merged, nil
}

// The kinds the bounded reader reads a gateway file and its .env as: a
// gateway file may come from a repository (the CI recipe commits one), so
// a named pipe, a device or a file of gigabytes there is refused, not read
// (docs/security.md#reads).
var (
	gatewayFileKind = fsread.Kind{Name: "gateway file", Max: maxFileBytes}
	gatewayEnvKind  = fsread.Kind{Name: "gateway .env file", Max: maxFileBytes}
)

func readCapped(path string) ([]byte, error) {
	data, err := fsread.ReadFile(path, gatewayFileKind)
	if err != nil {
		return nil, &ConfigError{Msg: "cannot read gateway file: " + err.Error()}
	}
	return data, nil
}

// tomlError places a go-toml error at path:line:column.
func tomlError(path string, err error) error {
	var strict *toml.StrictMissingError
	if errors.As(err, &strict) && len(strict.Errors) > 0 {
		var b strings.Builder
		for i, e := range strict.Errors {
			if i > 0 {
				b.WriteString("; ")
			}
			row, col := e.Position()
			fmt.Fprintf(&b, "%s:%d:%d: unknown key %s", path, row, col, strings.Join(e.Key(), "."))
		}
		b.WriteString(" (docs/gateway.md#the-file lists the keys)")
		return &ConfigError{Msg: b.String()}
	}
	var de *toml.DecodeError
	if errors.As(err, &de) {
		row, col := de.Position()
		return &ConfigError{Msg: fmt.Sprintf("%s:%d:%d: %s", path, row, col, de.Error())}
	}
	return &ConfigError{Msg: path + ": " + err.Error()}
}

// merge lays over onto base: [[endpoint]], [[device]] by id and [[model]]
// by name replace an earlier entry or append; tables merge key by key;
// anything else is replaced (later wins).
func merge(base, over map[string]any, path string) error {
	for k, v := range over {
		switch k {
		case "endpoint", "device", "model", "local_model":
			id := "id"
			if k == "model" || k == "local_model" {
				id = "name"
			}
			items, ok := v.([]any)
			if !ok {
				return &ConfigError{Msg: fmt.Sprintf("%s: %s must be an array of tables ([[%s]])", path, k, k)}
			}
			old, _ := base[k].([]any)
			own := map[string]bool{}
			for _, it := range items {
				entry, _ := it.(map[string]any)
				key, _ := entry[id].(string)
				// One file naming an entry twice is a mistake; a later
				// file replacing an included entry is the point.
				if key != "" && own[key] {
					return &ConfigError{Msg: fmt.Sprintf("%s: invalid config: duplicate %s %s %s", path, k, id, key)}
				}
				own[key] = true
				replaced := false
				for i, o := range old {
					prev, _ := o.(map[string]any)
					if k2, _ := prev[id].(string); key != "" && k2 == key {
						old[i], replaced = it, true
						break
					}
				}
				if !replaced {
					old = append(old, it)
				}
			}
			base[k] = old
		default:
			bt, okb := base[k].(map[string]any)
			ot, oko := v.(map[string]any)
			if okb && oko {
				if err := merge(bt, ot, path); err != nil {
					return err
				}
				continue
			}
			base[k] = v
		}
	}
	return nil
}

// interpolateTree replaces ${VAR} in every string value; $$ is a dollar.
func interpolateTree(v any, lookup gateway.LookupFunc, path string) error {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			if s, ok := e.(string); ok {
				r, err := interpolate(s, lookup)
				if err != nil {
					return &ConfigError{Msg: fmt.Sprintf("%s: %s (in %s)", path, err.Error(), k)}
				}
				t[k] = r
				continue
			}
			if err := interpolateTree(e, lookup, path); err != nil {
				return err
			}
		}
	case []any:
		for i, e := range t {
			if s, ok := e.(string); ok {
				r, err := interpolate(s, lookup)
				if err != nil {
					return &ConfigError{Msg: path + ": " + err.Error()}
				}
				t[i] = r
				continue
			}
			if err := interpolateTree(e, lookup, path); err != nil {
				return err
			}
		}
	}
	return nil
}

// interpolate expands one string (engine/envvar). An unset variable or an
// unclosed ${ is an error naming the variable, never a value.
func interpolate(s string, lookup gateway.LookupFunc) (string, error) {
	out, err := envvar.Expand(s, lookup)
	var unset *envvar.UnsetError
	switch {
	case errors.Is(err, envvar.ErrUnclosed):
		return "", errors.New("unclosed ${...} interpolation")
	case errors.As(err, &unset):
		return "", fmt.Errorf("unresolved environment variable %s: export it or set it in the file's .env", unset.Name)
	}
	return out, err
}

// loadDotenv reads the name-matched .env of every file in chain (x.toml
// -> x.env) that exists; earlier files win, as the process environment
// wins over all of them.
func loadDotenv(chain []string) ([]map[string]string, error) {
	var out []map[string]string
	for _, p := range chain {
		envPath := strings.TrimSuffix(p, filepath.Ext(p)) + ".env"
		data, err := fsread.ReadFile(envPath, gatewayEnvKind)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, &ConfigError{Msg: "cannot read " + envPath + ": " + err.Error()}
		}
		m, err := parseDotenv(envPath, data)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// parseDotenv reads KEY=VALUE lines: blank lines and # comments are
// skipped, "export " is allowed, and a value in single quotes is literal
// while double quotes understand \n, \" and \\.
func parseDotenv(path string, data []byte) (map[string]string, error) {
	m := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), maxFileBytes)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		line = strings.TrimPrefix(line, "export ")
		k, v, ok := strings.Cut(line, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" || strings.ContainsAny(k, " \t\"'") {
			return nil, &ConfigError{Msg: fmt.Sprintf("%s:%d: expected KEY=VALUE", path, n)}
		}
		v = strings.TrimSpace(v)
		switch {
		case len(v) >= 2 && v[0] == '\'' && v[len(v)-1] == '\'':
			v = v[1 : len(v)-1]
		case len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"':
			v = strings.NewReplacer(`\n`, "\n", `\"`, `"`, `\\`, `\`).Replace(v[1 : len(v)-1])
		default:
			if i := strings.Index(v, " #"); i >= 0 {
				v = strings.TrimSpace(v[:i])
			}
		}
		m[k] = v
	}
	return m, sc.Err()
}
