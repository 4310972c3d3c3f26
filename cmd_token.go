package main

import (
	"fmt"
	"time"

	"github.com/catalogd/catalogd/server/auth"
	"github.com/spf13/cobra"
)

func newTokenCommand(e *env) *cobra.Command {
	var (
		o   serveOptions
		ttl time.Duration
	)
	cmd := &cobra.Command{
		Use:   "token [--db PATH] [--base-url URL] [--ttl DURATION]",
		Short: "Print a token of the local dev issuer (for serve --dev)",
		Long: `token signs a token with the dev key beside --db, as serve --dev does, so
that scripts can call a dev server without going through /oauth/token. It is
accepted only by a server in development mode using the same key and base URL.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if ttl <= 0 || ttl > devTokenTTL {
				return usageErrorf("token: --ttl %s: want a duration above 0 and at most %s", ttl, devTokenTTL)
			}
			o.dev = true
			o.resolveURLs(defaultAddr)
			key, err := auth.LoadOrCreateDevKey(devKeyPath(o.db))
			if err != nil {
				return fmt.Errorf("token: dev signing key: %w", err)
			}
			dev := auth.NewDevIssuer(key, o.issuer, o.audience, o.devClientID, randomSecret(), ttl)
			token, _, err := dev.Token(time.Now())
			if err != nil {
				return fmt.Errorf("token: %w", err)
			}
			fmt.Fprintln(e.stdout, token)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.db, "db", defaultDB, "catalogue file; the dev key is beside it")
	f.StringVar(&o.baseURL, "base-url", "", "public URL of the API (default http://127.0.0.1:8080/api/v1)")
	f.StringVar(&o.devClientID, "dev-client-id", "dev", "client id the token names")
	f.DurationVar(&ttl, "ttl", devTokenTTL, "lifetime of the token")
	return cmd
}
