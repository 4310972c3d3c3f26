package auth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// LoadOrCreateDevKey returns the dev signing key stored at path, creating an
// ECDSA P-256 key there (PKCS#8 PEM, mode 0600) if there is none, so that
// tokens issued before a restart stay valid after it.
//
// Creation is atomic: the key is written to a temporary file in the same
// directory and linked into place only if path still does not exist, so two
// processes starting together end up with the same key. The directory must
// exist.
//
// An existing key file is used whatever its permissions: the key only signs
// tokens for a dev server that listens on loopback, so a file readable by
// other local users gives them nothing they could not get from that server's
// token endpoint, and refusing would break setups (shared volumes, Windows)
// where permission bits mean little.
func LoadOrCreateDevKey(path string) (crypto.Signer, error) {
	key, err := readDevKey(path)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return key, err
	}

	ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("dev key %s: generate: %w", path, err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(ec)
	if err != nil {
		return nil, fmt.Errorf("dev key %s: encode: %w", path, err)
	}
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})

	// CreateTemp creates the file with mode 0600.
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("dev key %s: create: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(pemBytes)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("dev key %s: write %s: %w", path, tmp.Name(), err)
	}
	switch err := os.Link(tmp.Name(), path); {
	case err == nil:
		return ec, nil
	case errors.Is(err, fs.ErrExist):
		// Another process created it first: use theirs.
		return readDevKey(path)
	default:
		// Some file systems have no hard links; a rename is still atomic,
		// only the race between two creators is lost.
		if rerr := os.Rename(tmp.Name(), path); rerr != nil {
			return nil, fmt.Errorf("dev key %s: move into place: %w", path, errors.Join(err, rerr))
		}
		return ec, nil
	}
}

func readDevKey(path string) (crypto.Signer, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("dev key %s: %w", path, err)
	}
	block, _ := pem.Decode(data)
	if block == nil || block.Type != "PRIVATE KEY" {
		return nil, fmt.Errorf("dev key %s: not a PEM \"PRIVATE KEY\" (PKCS#8) file; delete it to have a new key created", path)
	}
	key, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("dev key %s: parse PKCS#8: %w", path, err)
	}
	switch k := key.(type) {
	case *ecdsa.PrivateKey:
		if _, err := signingMethod(k); err != nil {
			return nil, fmt.Errorf("dev key %s: %w", path, err)
		}
		return k, nil
	case *rsa.PrivateKey:
		return k, nil
	case ed25519.PrivateKey:
		return k, nil
	}
	return nil, fmt.Errorf("dev key %s: unsupported key type %T (want ECDSA, RSA or Ed25519)", path, key)
}
