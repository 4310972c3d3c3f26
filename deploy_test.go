package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"go.yaml.in/yaml/v3"
)

// The tests in this file keep deploy/ in step with the command line: every
// flag and every CATALOGD_ variable that the systemd units, the container
// image and the Kubernetes manifests give catalogd must be one that the
// subcommand they run defines, with a value it accepts. A renamed or removed
// flag fails here rather than at 3 a.m. on a server that refuses to start.

// catalogdRun is one way deploy/ runs catalogd: where it is written, its
// arguments after the program name, and the environment it gets.
type catalogdRun struct {
	where string
	args  []string
	// env holds variables that are set; mentioned holds variables that are
	// only named (commented-out settings, prose), checked by name alone.
	env       []envSetting
	mentioned []envSetting
}

type envSetting struct {
	where, name, value string
}

// checkRun parses r's command line with the real command tree and checks its
// environment against the flags of the subcommand it runs.
func checkRun(t *testing.T, r catalogdRun) {
	t.Helper()
	cmd, err := parseCommandLine(r.args)
	if err != nil {
		t.Errorf("%s: catalogd %s: %v", r.where, strings.Join(r.args, " "), err)
		return
	}
	for _, e := range r.env {
		f := flagOfVariable(cmd.flags, e.name)
		if f == nil {
			t.Errorf("%s: %s is the variable of no flag of catalogd %s", e.where, e.name, cmd.name)
			continue
		}
		if cmd.flags.Changed(f.Name) {
			t.Errorf("%s: %s has no effect: --%s on the command line (%s) wins over it", e.where, e.name, f.Name, r.where)
		}
		// An empty variable is as good as unset (applyEnvironment).
		if e.value == "" {
			continue
		}
		if err := f.Value.Set(e.value); err != nil {
			t.Errorf("%s: %s=%q: catalogd %s refuses it: %v", e.where, e.name, e.value, cmd.name, err)
		}
	}
	for _, e := range r.mentioned {
		if flagOfVariable(cmd.flags, e.name) == nil {
			t.Errorf("%s: %s is the variable of no flag of catalogd %s", e.where, e.name, cmd.name)
		}
	}
	// The container image leaves the identity provider to whoever runs
	// it: a placeholder stands in, there only, so that a unit or manifest
	// that forgot its issuer still fails here.
	if f := cmd.flags.Lookup("issuer"); f != nil && strings.HasPrefix(r.where, "deploy/container/") && f.Value.String() == "" {
		if err := cmd.flags.Set("issuer", "https://idp.example"); err != nil {
			t.Fatal(err)
		}
	}
	if err := cmd.check(); err != nil {
		t.Errorf("%s: catalogd %s with its settings: %v", r.where, strings.Join(r.args, " "), err)
	}
}

type parsedCommand struct {
	name  string
	flags *pflag.FlagSet
	// check runs the checks the subcommand makes of its settings before
	// it runs (cobra's PreRunE), if any.
	check func() error
}

// parseCommandLine parses args as catalogd would, on a fresh command tree:
// the subcommand must exist, and its flags, their values and its positional
// arguments must be accepted.
func parseCommandLine(args []string) (parsedCommand, error) {
	e := &env{getenv: func(string) string { return "" }, stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard}
	root := newRootCommand(e)
	cmd, rest, err := root.Find(args)
	if err != nil {
		return parsedCommand{}, err
	}
	if cmd == root {
		return parsedCommand{}, fmt.Errorf("not a catalogd command")
	}
	if err := cmd.ParseFlags(rest); err != nil {
		return parsedCommand{}, err
	}
	if err := cmd.ValidateArgs(cmd.Flags().Args()); err != nil {
		return parsedCommand{}, err
	}
	check := func() error { return nil }
	if cmd.PreRunE != nil {
		check = func() error { return cmd.PreRunE(cmd, cmd.Flags().Args()) }
	}
	return parsedCommand{name: cmd.Name(), flags: cmd.Flags(), check: check}, nil
}

// flagOfVariable is the flag whose environment variable is name, or nil.
func flagOfVariable(flags *pflag.FlagSet, name string) *pflag.Flag {
	var found *pflag.Flag
	flags.VisitAll(func(f *pflag.Flag) {
		if f.Name != "help" && envName(f.Name) == name {
			found = f
		}
	})
	return found
}

var catalogdVariable = regexp.MustCompile(`\bCATALOGD_[A-Z0-9_]*[A-Z0-9]\b`)

func readDeployFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestDeploySystemdUnits(t *testing.T) {
	units, err := filepath.Glob("deploy/systemd/*.service")
	if err != nil || len(units) == 0 {
		t.Fatalf("no systemd units in deploy/systemd (%v)", err)
	}
	for _, unit := range units {
		entries := parseUnitFile(t, unit)
		var runs []catalogdRun
		var env []envSetting
		var mentioned []envSetting
		for _, en := range entries {
			where := fmt.Sprintf("%s:%d", unit, en.line)
			switch {
			case en.section == "Service" && strings.HasPrefix(en.key, "Exec"):
				words := splitWords(en.value)
				if len(words) == 0 {
					continue
				}
				// Prefixes such as '-' and '+' change how systemd runs
				// the command, not what it runs.
				if path.Base(strings.TrimLeft(words[0], "-@:+!")) == "catalogd" {
					runs = append(runs, catalogdRun{where: where + " " + en.key, args: words[1:]})
				}
			case en.section == "Service" && en.key == "Environment":
				for _, w := range splitWords(en.value) {
					name, value, _ := strings.Cut(w, "=")
					if strings.HasPrefix(name, "CATALOGD_") {
						env = append(env, envSetting{where, name, value})
					}
				}
			case en.section == "Service" && en.key == "EnvironmentFile":
				// The example beside the unit is what goes at that path.
				example := filepath.Join(filepath.Dir(unit), path.Base(strings.TrimPrefix(en.value, "-"))+".example")
				set, named := parseEnvironmentFile(t, example)
				env = append(env, set...)
				mentioned = append(mentioned, named...)
			}
		}
		if len(runs) == 0 {
			t.Errorf("%s: no Exec line runs catalogd", unit)
		}
		// The environment is the unit's: every catalogd it runs gets it,
		// but only the main one (ExecStart) must accept all of it.
		for _, r := range runs {
			if strings.HasSuffix(r.where, " ExecStart") {
				r.env, r.mentioned = env, mentioned
			}
			checkRun(t, r)
		}
	}

	// A path unit must start a unit that is here.
	paths, _ := filepath.Glob("deploy/systemd/*.path")
	for _, p := range paths {
		target := strings.TrimSuffix(path.Base(p), ".path") + ".service"
		for _, en := range parseUnitFile(t, p) {
			if en.section == "Path" && en.key == "Unit" {
				target = en.value
			}
		}
		if _, err := os.Stat(filepath.Join("deploy/systemd", target)); err != nil {
			t.Errorf("%s starts %s, which is not in deploy/systemd", p, target)
		}
	}
}

type unitEntry struct {
	section, key, value string
	line                int
}

// parseUnitFile reads a systemd unit file: sections, Key=Value lines and
// lines continued with a trailing backslash.
func parseUnitFile(t *testing.T, name string) []unitEntry {
	t.Helper()
	var entries []unitEntry
	section := ""
	lines := strings.Split(readDeployFile(t, name), "\n")
	for i := 0; i < len(lines); i++ {
		n := i + 1
		line := strings.TrimSpace(lines[i])
		for strings.HasSuffix(line, `\`) && i+1 < len(lines) {
			i++
			line = strings.TrimSuffix(line, `\`) + " " + strings.TrimSpace(lines[i])
		}
		switch {
		case line == "" || line[0] == '#' || line[0] == ';':
		case line[0] == '[' && line[len(line)-1] == ']':
			section = line[1 : len(line)-1]
		default:
			key, value, ok := strings.Cut(line, "=")
			if !ok {
				t.Fatalf("%s:%d: not Key=Value: %q", name, n, line)
			}
			entries = append(entries, unitEntry{section, strings.TrimSpace(key), strings.TrimSpace(value), n})
		}
	}
	return entries
}

// parseEnvironmentFile reads an environment file: VARIABLE=value lines, set;
// commented-out ones and variables named in comments, mentioned.
func parseEnvironmentFile(t *testing.T, name string) (set, mentioned []envSetting) {
	t.Helper()
	assignment := regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*)=(.*)$`)
	for i, line := range strings.Split(readDeployFile(t, name), "\n") {
		where := fmt.Sprintf("%s:%d", name, i+1)
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "#") {
			for _, v := range catalogdVariable.FindAllString(line, -1) {
				mentioned = append(mentioned, envSetting{where: where, name: v})
			}
			continue
		}
		if line == "" {
			continue
		}
		m := assignment.FindStringSubmatch(line)
		if m == nil {
			t.Errorf("%s: not VARIABLE=value: %q", where, line)
			continue
		}
		if strings.HasPrefix(m[1], "CATALOGD_") {
			set = append(set, envSetting{where, m[1], m[2]})
		}
	}
	return set, mentioned
}

// splitWords splits a command line into words as systemd and a shell do for
// the simple lines used here: white space separates, quotes group.
func splitWords(s string) []string {
	var words []string
	var w strings.Builder
	inWord := false
	var quote rune
	for _, c := range s {
		switch {
		case quote != 0 && c == quote:
			quote = 0
		case quote != 0:
			w.WriteRune(c)
		case c == '"' || c == '\'':
			quote, inWord = c, true
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		default:
			w.WriteRune(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, w.String())
	}
	return words
}

// containerImage is what deploy/container/Containerfile makes: the command
// its entrypoint runs and the environment it sets.
type containerImage struct {
	entrypoint []string
	env        []envSetting
}

func parseContainerfile(t *testing.T) containerImage {
	t.Helper()
	const name = "deploy/container/Containerfile"
	var img containerImage
	lines := strings.Split(readDeployFile(t, name), "\n")
	for i := 0; i < len(lines); i++ {
		where := fmt.Sprintf("%s:%d", name, i+1)
		line := strings.TrimSpace(lines[i])
		for strings.HasSuffix(line, `\`) && i+1 < len(lines) {
			i++
			line = strings.TrimSuffix(line, `\`) + " " + strings.TrimSpace(lines[i])
		}
		if line == "" || line[0] == '#' {
			continue
		}
		instr, rest, _ := strings.Cut(line, " ")
		switch strings.ToUpper(instr) {
		case "FROM":
			// Each stage starts afresh; the last one is the image.
			img = containerImage{}
		case "ENTRYPOINT":
			if err := json.Unmarshal([]byte(rest), &img.entrypoint); err != nil {
				t.Fatalf("%s: ENTRYPOINT is not the exec form (a JSON array): %v", where, err)
			}
		case "ENV":
			words := splitWords(rest)
			if len(words) > 0 && !strings.Contains(words[0], "=") {
				// The old form: ENV NAME value.
				words = []string{words[0] + "=" + strings.Join(words[1:], " ")}
			}
			for _, w := range words {
				k, v, _ := strings.Cut(w, "=")
				if strings.HasPrefix(k, "CATALOGD_") {
					img.env = append(img.env, envSetting{where, k, v})
				}
			}
		}
	}
	if len(img.entrypoint) == 0 || path.Base(img.entrypoint[0]) != "catalogd" {
		t.Fatalf("%s: the image's ENTRYPOINT %q does not run catalogd", name, img.entrypoint)
	}
	return img
}

func TestDeployContainerfile(t *testing.T) {
	img := parseContainerfile(t)
	checkRun(t, catalogdRun{where: "deploy/container/Containerfile ENTRYPOINT", args: img.entrypoint[1:], env: img.env})
}

func TestDeployKubernetes(t *testing.T) {
	img := parseContainerfile(t)
	files, err := filepath.Glob("deploy/kubernetes/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests in deploy/kubernetes (%v)", err)
	}
	type object struct {
		file string
		doc  map[string]any
	}
	var objects []object
	configMaps := map[string]object{}
	var mentioned []envSetting
	commentedOut := regexp.MustCompile(`(?m)^\s*#\s*(CATALOGD_[A-Z0-9_]+)\s*:`)
	for _, f := range files {
		text := readDeployFile(t, f)
		docs, err := parseYAML(f, text)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range docs {
			m, ok := d.(map[string]any)
			if !ok {
				t.Fatalf("%s: a document is not a mapping", f)
			}
			objects = append(objects, object{f, m})
			if yamlString(m, "kind") == "ConfigMap" {
				configMaps[yamlString(m, "metadata", "name")] = object{f, m}
			}
		}
		for _, m := range commentedOut.FindAllStringSubmatch(text, -1) {
			mentioned = append(mentioned, envSetting{where: f + " (commented out)", name: m[1]})
		}
	}

	usedConfigMaps := map[string]bool{}
	catalogdContainers := 0
	for _, o := range objects {
		pod, ok := yamlGet(o.doc, "spec", "template", "spec").(map[string]any)
		if !ok {
			continue
		}
		name := fmt.Sprintf("%s: %s %s", o.file, yamlString(o.doc, "kind"), yamlString(o.doc, "metadata", "name"))
		runsCatalogd := false
		for _, list := range []string{"initContainers", "containers"} {
			containers, _ := pod[list].([]any)
			for _, c := range containers {
				c, _ := c.(map[string]any)
				where := fmt.Sprintf("%s %s %s", name, list, yamlString(c, "name"))
				command, args := yamlStrings(c["command"]), yamlStrings(c["args"])
				var argv []string
				switch {
				case len(command) > 0 && path.Base(command[0]) == "catalogd":
					argv = append(command[1:], args...)
				case imageName(yamlString(c, "image")) == "catalogd" && len(command) == 0:
					argv = append(slices.Clone(img.entrypoint[1:]), args...)
				case imageName(yamlString(c, "image")) == "catalogd":
					t.Errorf("%s: the catalogd image with command %q", where, command)
					continue
				default:
					continue
				}
				runsCatalogd = true
				catalogdContainers++
				r := catalogdRun{where: where, args: argv}
				envList, _ := c["env"].([]any)
				for _, e := range envList {
					e, _ := e.(map[string]any)
					if n := yamlString(e, "name"); strings.HasPrefix(n, "CATALOGD_") {
						r.env = append(r.env, envSetting{where + " env", n, yamlString(e, "value")})
					}
				}
				envFrom, _ := c["envFrom"].([]any)
				for _, ef := range envFrom {
					cmName := yamlString(ef, "configMapRef", "name")
					if cmName == "" {
						continue
					}
					cm, ok := configMaps[cmName]
					if !ok {
						t.Errorf("%s: envFrom names ConfigMap %s, which is not in deploy/kubernetes", where, cmName)
						continue
					}
					usedConfigMaps[cmName] = true
					data, _ := yamlGet(cm.doc, "data").(map[string]any)
					for k, v := range data {
						if strings.HasPrefix(k, "CATALOGD_") {
							s, _ := v.(string)
							r.env = append(r.env, envSetting{fmt.Sprintf("%s: ConfigMap %s", cm.file, cmName), k, s})
						}
					}
				}
				r.mentioned = mentioned
				checkRun(t, r)
			}
		}
		// Service links would put CATALOGD_SERVICE_HOST and the like,
		// named after a Service called catalogd, among catalogd's settings.
		if runsCatalogd && yamlString(pod, "enableServiceLinks") != "false" {
			t.Errorf("%s: set enableServiceLinks: false; service links add CATALOGD_* variables to the environment", name)
		}
	}
	if catalogdContainers == 0 {
		t.Fatal("no container in deploy/kubernetes runs catalogd")
	}
	for name, cm := range configMaps {
		if !usedConfigMaps[name] {
			t.Errorf("%s: ConfigMap %s is used by no catalogd container", cm.file, name)
		}
	}
}

// imageName is the last path element of an image reference, without its tag
// or digest: registry.example.com/team/catalogd:1.0 is catalogd.
func imageName(ref string) string {
	ref, _, _ = strings.Cut(ref, "@")
	name := path.Base(ref)
	name, _, _ = strings.Cut(name, ":")
	return name
}

// yamlGet follows keys through nested mappings; nil when one is missing.
func yamlGet(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

func yamlString(v any, keys ...string) string {
	s, _ := yamlGet(v, keys...).(string)
	return s
}

func yamlStrings(v any) []string {
	list, _ := v.([]any)
	var out []string
	for _, x := range list {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}

// parseYAML reads every document of a manifest, with scalars as strings
// whatever their YAML type, as the checks compare them with command-line
// text.
func parseYAML(file, text string) ([]any, error) {
	dec := yaml.NewDecoder(strings.NewReader(text))
	var docs []any
	for {
		var doc any
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		if doc != nil {
			docs = append(docs, scalarsAsStrings(doc))
		}
	}
}

func scalarsAsStrings(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			v[k] = scalarsAsStrings(e)
		}
		return v
	case []any:
		for i, e := range v {
			v[i] = scalarsAsStrings(e)
		}
		return v
	case nil:
		return ""
	default:
		return fmt.Sprint(v)
	}
}

// TestDeploySystemdTLSUnit checks that the TLS unit, with the settings of
// its example environment file, runs a serve that answers HTTPS on port 443
// with certificates from an ACME CA, and that the unit gives it what that
// needs: the capability to bind port 443 and a writable ACME cache in the
// state directory, where serve looks for it.
func TestDeploySystemdTLSUnit(t *testing.T) {
	const unit = "deploy/systemd/catalogd-tls.service"
	settings := map[string][]string{}
	var execStart []string
	for _, en := range parseUnitFile(t, unit) {
		if en.section != "Service" {
			continue
		}
		settings[en.key] = append(settings[en.key], splitWords(en.value)...)
		if en.key == "ExecStart" {
			execStart = splitWords(en.value)
		}
	}
	if len(execStart) < 2 || path.Base(execStart[0]) != "catalogd" {
		t.Fatalf("%s: ExecStart %q does not run catalogd", unit, execStart)
	}
	cmd, err := parseCommandLine(execStart[1:])
	if err != nil || cmd.name != "serve" {
		t.Fatalf("%s: ExecStart %q: %v; want catalogd serve", unit, execStart, err)
	}
	env := map[string]string{}
	for _, file := range settings["EnvironmentFile"] {
		set, _ := parseEnvironmentFile(t, filepath.Join("deploy/systemd", path.Base(file)+".example"))
		for _, e := range set {
			env[e.name] = e.value
		}
	}
	if err := applyEnvironment(cmd.flags, func(k string) string { return env[k] }); err != nil {
		t.Fatalf("%s: %v", unit, err)
	}
	str := func(name string) string { v, _ := cmd.flags.GetString(name); return v }
	domains, _ := cmd.flags.GetStringSlice("acme-domain")
	o := serveOptions{db: str("db"), addr: str("addr"), baseURL: str("base-url"), tls: tlsOptions{
		certFile: str("tls-cert"), keyFile: str("tls-key"), acmeDomains: domains, acmeEmail: str("acme-email"),
		acmeDirectory: str("acme-directory"), acmeHTTPAddr: str("acme-http-addr"),
	}}
	if err := o.tls.check(false, o.addr); err != nil || len(o.tls.acmeDomains) == 0 {
		t.Fatalf("%s: serve's TLS settings %+v: %v; want certificates from an ACME CA", unit, o.tls, err)
	}
	if _, port, _ := net.SplitHostPort(o.addr); port != "443" {
		t.Errorf("%s: serve listens on %q, want port 443", unit, o.addr)
	}

	for _, key := range []string{"AmbientCapabilities", "CapabilityBoundingSet"} {
		if !slices.Equal(settings[key], []string{"CAP_NET_BIND_SERVICE"}) {
			t.Errorf("%s: %s=%v, want CAP_NET_BIND_SERVICE alone", unit, key, settings[key])
		}
	}
	if slices.Contains(settings["PrivateUsers"], "yes") {
		t.Errorf("%s: PrivateUsers=yes: the capability would not reach the host's network", unit)
	}
	// The state directory /var/lib/NAME is /var/lib/private/NAME under
	// DynamicUser=; the cache must be one of the unit's state directories
	// and writable.
	cache, err := filepath.Rel("/var/lib", acmeCacheDir(o.db))
	if err != nil || strings.HasPrefix(cache, "..") {
		t.Fatalf("%s: the ACME cache %s is not under /var/lib", unit, acmeCacheDir(o.db))
	}
	if !slices.Contains(settings["StateDirectory"], cache) {
		t.Errorf("%s: StateDirectory=%v lacks the ACME cache %s", unit, settings["StateDirectory"], cache)
	}
	if !slices.Contains(settings["ReadWritePaths"], "/var/lib/private/"+cache) {
		t.Errorf("%s: ReadWritePaths=%v lacks the ACME cache /var/lib/private/%s", unit, settings["ReadWritePaths"], cache)
	}
}
