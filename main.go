// Command catalogd imports catalogue snapshots into a bbolt file and serves
// the partner catalogue API and its MCP interface from it.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// The first signal asks for a clean end (serve drains, import removes
	// its temporary file); a second one ends the process at once, unless it
	// comes within signalRepeat of the first: timeout(1) signals the
	// process and then its group, so one stop may arrive twice.
	context.AfterFunc(ctx, func() { time.AfterFunc(signalRepeat, stop) })
	code := run(ctx, os.Args[1:], os.Environ(), os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// signalRepeat is how long after a first signal another is taken for the
// same request to stop.
const signalRepeat = time.Second

// Exit statuses (docs/CONTRACT.md, Command line).
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

// env is what the commands read from the process environment.
type env struct {
	getenv  func(string) string
	unknown []string // CATALOGD_ variables that set no flag, sorted
	stdin   io.Reader
	stdout  io.Writer
	stderr  io.Writer
}

// run is the whole program; main only binds it to the process. environ is
// the environment as "key=value" strings.
func run(ctx context.Context, args, environ []string, stdin io.Reader, stdout, stderr io.Writer) int {
	vars := environMap(environ)
	e := &env{getenv: func(k string) string { return vars[k] }, stdin: stdin, stdout: stdout, stderr: stderr}
	root := newRootCommand(e)
	e.unknown = unknownVariables(root, vars)
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)

	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	var usage *usageError
	if errors.As(err, &usage) {
		fmt.Fprintf(stderr, "catalogd: %v\nRun 'catalogd --help' for usage.\n", err)
		return exitUsage
	}
	var reported *reportedError
	if !errors.As(err, &reported) {
		fmt.Fprintf(stderr, "catalogd: %v\n", err)
	}
	return exitFailure
}

func newRootCommand(e *env) *cobra.Command {
	root := &cobra.Command{
		Use:   "catalogd",
		Short: "A read-only partner catalogue of trading-card sets and cards",
		Long: `catalogd imports JSON catalogue snapshots into a single bbolt file and serves
the partner catalogue API (REST and MCP) from it, behind OAuth bearer tokens.

Every flag can also be set with an environment variable: CATALOGD_ followed by
the flag name in upper case with '-' as '_' (CATALOGD_DB, CATALOGD_JWKS_URL).
Flags win over the environment. A CATALOGD_ variable that sets no flag of any
command is ignored, with a warning.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		// With no Args validator cobra reports an unknown command as a plain
		// error; this makes it a usage error like any other.
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageErrorf("unknown command %q", args[0])
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return cmd.Help()
		},
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			// Before anything can fail: the typo may be why it does.
			warnUnknownVariables(e, cmd.Annotations[annotationLogsJSON] != "")
			return applyEnvironment(cmd.Flags(), e.getenv)
		},
	}
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return &usageError{err: err}
	})
	root.CompletionOptions.DisableDefaultCmd = true
	root.AddCommand(
		newImportCommand(e),
		newServeCommand(e),
		newTokenCommand(e),
		newInfoCommand(e),
		newVersionCommand(e),
	)
	return root
}

// applyEnvironment gives every flag not set on the command line the value of
// its CATALOGD_ variable, if any. A list flag takes a comma-separated list.
func applyEnvironment(flags *pflag.FlagSet, getenv func(string) string) error {
	var err error
	flags.VisitAll(func(f *pflag.Flag) {
		if err != nil || f.Changed || f.Name == "help" {
			return
		}
		name := envName(f.Name)
		v := getenv(name)
		if v == "" {
			return
		}
		if serr := f.Value.Set(v); serr != nil {
			err = usageErrorf("environment variable %s=%q: %v", name, v, serr)
			return
		}
		f.Changed = true
	})
	return err
}

// environMap reads "key=value" strings; the first of a repeated key wins,
// as with os.Getenv.
func environMap(environ []string) map[string]string {
	vars := make(map[string]string, len(environ))
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		if _, seen := vars[k]; !seen {
			vars[k] = v
		}
	}
	return vars
}

// unknownVariables returns the CATALOGD_ variables of vars that set no flag
// of any command, sorted: a misspelt name would otherwise go unnoticed, the
// setting silently at its default. A variable of another command's flag is
// not unknown: a command run beside serve (import, info or token by `docker
// exec` or `kubectl exec` in serve's container) inherits serve's
// environment.
func unknownVariables(root *cobra.Command, vars map[string]string) []string {
	known := map[string]bool{}
	var visit func(c *cobra.Command)
	visit = func(c *cobra.Command) {
		// cobra adds --help when a command runs, after this: no variable
		// sets it.
		mark := func(f *pflag.Flag) { known[envName(f.Name)] = true }
		c.Flags().VisitAll(mark)
		c.PersistentFlags().VisitAll(mark)
		for _, sub := range c.Commands() {
			visit(sub)
		}
	}
	visit(root)
	var unknown []string
	for k := range vars {
		if strings.HasPrefix(k, envPrefix) && !known[k] {
			unknown = append(unknown, k)
		}
	}
	slices.Sort(unknown)
	return unknown
}

// warnUnknownVariables names each unknown variable on stderr: as a JSON log
// line for a command whose output is JSON log lines (serve), else as text.
func warnUnknownVariables(e *env, asJSON bool) {
	log := slog.New(slog.NewJSONHandler(e.stderr, nil))
	for _, name := range e.unknown {
		if asJSON {
			log.Warn("environment variable ignored", slog.String("variable", name), slog.String("reason", unknownVariableReason))
			continue
		}
		fmt.Fprintf(e.stderr, "catalogd: warning: environment variable %s %s; it is ignored\n", name, unknownVariableReason)
	}
}

// unknownVariableReason is why an unknown variable is ignored.
const unknownVariableReason = "sets no flag of any catalogd command"

// annotationLogsJSON marks a command whose output is JSON log lines: it
// reports unknown variables in its log rather than as plain text.
const annotationLogsJSON = "catalogd/logs-json"

const envPrefix = "CATALOGD_"

// envName is the environment variable of a flag: --jwks-url is CATALOGD_JWKS_URL.
func envName(flag string) string {
	return envPrefix + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

// usageError is a command line that cannot be run as given: exit status 2.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

func usageErrorf(format string, args ...any) error {
	return &usageError{err: fmt.Errorf(format, args...)}
}

// reportedError is a failure whose details the command has already written to
// stderr; run only sets the exit status.
type reportedError struct{ err error }

func (e *reportedError) Error() string { return e.err.Error() }
func (e *reportedError) Unwrap() error { return e.err }

// minArgs and noArgs validate a command's arguments for cobra, reporting usage errors.
func minArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) < n {
			return usageErrorf("%s: missing %s", cmd.Name(), what)
		}
		return nil
	}
}

func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usageErrorf("%s: unexpected argument %q", cmd.Name(), args[0])
	}
	return nil
}
