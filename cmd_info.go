package main

import (
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/debug"
	"text/tabwriter"
	"time"

	"github.com/catalogd/catalogd/catalog/store"
	"github.com/spf13/cobra"
)

func newInfoCommand(e *env) *cobra.Command {
	var (
		db     string
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "info [--db PATH]",
		Short: "Show the generation, sources and counts of a catalogue file",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			d, err := store.Open(db)
			if err != nil {
				return err
			}
			defer d.Close()
			info := d.Info()
			if asJSON {
				enc := json.NewEncoder(e.stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(info)
			}
			return printInfo(e, db, info)
		},
	}
	cmd.Flags().StringVar(&db, "db", defaultDB, "catalogue file")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the information as JSON")
	return cmd
}

func printInfo(e *env, db string, info store.Info) error {
	w := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintf(w, "catalogue:\t%s\n", db)
	fmt.Fprintf(w, "generation:\t%s\n", info.Generation)
	fmt.Fprintf(w, "imported at:\t%s (%s ago)\n", info.ImportedAt.UTC().Format(time.RFC3339), time.Since(info.ImportedAt).Round(time.Second))
	fmt.Fprintln(w, "sources:")
	for _, s := range info.Sources {
		fmt.Fprintf(w, "  %s\tsha256:%s\t%d bytes\n", s.Name, s.SHA256, s.Bytes)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	w = tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "zone\tsets\tcards\t")
	var sets, cards int64
	for _, z := range info.Zones {
		fmt.Fprintf(w, "%s\t%d\t%d\t\n", z.Zone, z.Sets, z.Cards)
		sets += z.Sets
		cards += z.Cards
	}
	fmt.Fprintf(w, "total\t%d\t%d\t\n", sets, cards)
	if err := w.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "name groups:  %d\n", info.NameGroups)
	return printHistory(e, info)
}

// printHistory lists the generations GET /catalog/changes answers since=
// for, oldest first, each with the records the next import changed.
func printHistory(e *env, info store.Info) error {
	w := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintf(w, "changes since (%s kept):\n", countOf(len(info.History), "import"))
	for _, s := range info.History {
		fmt.Fprintf(w, "  %s\t%s changed by the import of %s\n", s.From, countOf(int(s.Changes), "record"), s.To)
	}
	fmt.Fprintf(w, "  %s\tthis generation\n", info.Generation)
	return w.Flush()
}

func newVersionCommand(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version of catalogd",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			fmt.Fprintf(e.stdout, "catalogd %s (%s, %s/%s)\n", version(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return nil
		},
	}
}

// version is the module version, or the VCS revision of a development build.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := bi.Main.Version
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				modified = "+dirty"
			}
		}
	}
	if (v == "" || v == "(devel)") && rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		return "devel-" + rev + modified
	}
	if v == "" {
		return "(devel)"
	}
	return v
}
