package config_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/regbo/lfp-swarm-lease/cli/internal/config"
	"github.com/regbo/lfp-swarm-lease/lease/etcdstore"
)

// password is the etcd password of these tests: no message may ever hold it.
const password = "pw-Zq8#s3cr3t"

func loadEtcd(t *testing.T, fs *pflag.FlagSet, vars ...string) (*config.Config, error) {
	t.Helper()
	base := []string{"SWARM_LEASE_NAMESPACE=x", "SWARM_LEASE_HOLDER_ID=h"}
	return config.Loader{Flags: fs, Environ: env(append(base, vars...)...)}.Load(context.Background())
}

func writeFile(t *testing.T, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestEtcdStoreSettings: an etcd:// store takes its endpoints and prefix from the URL and the
// rest from the etcd_* settings, each from any layer with its source; the timeouts default to
// the store's.
func TestEtcdStoreSettings(t *testing.T) {
	pwFile := writeFile(t, "pw", []byte(password+"\n"))
	c, err := loadEtcd(t, flags(t, "--etcd-username", "alice", "--etcd-request-timeout-ms", "2500"),
		"SWARM_LEASE_STORE=etcd://10.0.0.1:2379,10.0.0.2:2379/team/leases", "SWARM_LEASE_ETCD_PASSWORD_FILE="+pwFile)
	if err != nil {
		t.Fatal(err)
	}
	want := etcdstore.Options{Endpoints: []string{"10.0.0.1:2379", "10.0.0.2:2379"}, Prefix: "/team/leases",
		DialTimeout: etcdstore.DefaultDialTimeout, RequestTimeout: 2500 * time.Millisecond, Username: "alice", Password: password}
	if c.Store != config.StoreEtcd || !slices.Equal(c.Etcd.Endpoints, want.Endpoints) || c.Etcd.Prefix != want.Prefix ||
		c.Etcd.DialTimeout != want.DialTimeout || c.Etcd.RequestTimeout != want.RequestTimeout || c.Etcd.Username != "alice" || c.Etcd.Password != password {
		t.Fatalf("etcd options %+v, want %+v", c.Etcd, want)
	}
	if got := c.Source(config.KeyEtcdPassword).String(); got != "file "+pwFile+" named by SWARM_LEASE_ETCD_PASSWORD_FILE" {
		t.Errorf("password from %s", got)
	}
	if got := c.Source(config.KeyEtcdUsername).String(); got != "flag --etcd-username" {
		t.Errorf("user from %s", got)
	}
	// The options print without the password (Describe, logs).
	for _, s := range []string{c.Etcd.String(), fmtV(c.Etcd), fmtV(*c)} {
		if strings.Contains(s, password) {
			t.Errorf("the password shows in %q", s)
		}
	}
	c, err = loadEtcd(t, nil, "SWARM_LEASE_STORE=etcd://127.0.0.1:2379", "SWARM_LEASE_ETCD_USERNAME=alice", "SWARM_LEASE_ETCD_PASSWORD="+password)
	if err != nil || c.Etcd.Password != password || c.Etcd.Prefix != etcdstore.DefaultPrefix {
		t.Fatalf("password from the environment: %+v, %v", c.Etcd, err)
	}
	// Not on etcd, the etcd settings are not looked at: a shared environment may hold them.
	if c, err := loadEtcd(t, nil, "SWARM_LEASE_STORE=memory", "SWARM_LEASE_ETCD_CA_FILE=/nonexistent", "SWARM_LEASE_ETCD_USERNAME=u"); err != nil || c.Etcd.Endpoints != nil {
		t.Fatalf("memory store with etcd settings: %+v, %v", c.Etcd, err)
	}
}

// TestEtcdSettingsErrors: every refusal names the setting and where its value came from, and
// none quotes the password — not even a URL that carries it.
func TestEtcdSettingsErrors(t *testing.T) {
	notPEM := writeFile(t, "ca.pem", []byte("not a certificate"))
	ca, cert, key, otherKey := testPKI(t)
	for _, tc := range []struct {
		name string
		fs   *pflag.FlagSet
		vars []string
		want []string
	}{
		{"credentials in the URL", nil, []string{"SWARM_LEASE_STORE=etcd://alice:" + password + "@127.0.0.1:2379"},
			[]string{"invalid store", "environment variable SWARM_LEASE_STORE", "no user, password", "SWARM_LEASE_ETCD_USERNAME", "SWARM_LEASE_ETCD_PASSWORD_FILE"}},
		{"a password with a slash in the URL", flags(t, "--store", "etcd://alice:pa/"+password+"@127.0.0.1:2379"), nil,
			[]string{"invalid store", "flag --store", "no user, password"}},
		{"a password in a query", nil, []string{"SWARM_LEASE_STORE=etcd://127.0.0.1:2379/x?password=" + password},
			[]string{"invalid store", "no user, password or query"}},
		{"no port", nil, []string{"SWARM_LEASE_STORE=etcd://127.0.0.1"},
			[]string{`invalid store "etcd://127.0.0.1" (from environment variable SWARM_LEASE_STORE)`, "HOST:PORT"}},
		{"a port that is no number", nil, []string{"SWARM_LEASE_STORE=etcd://h:http"}, []string{"invalid store", "port"}},
		{"a password without a user", nil, []string{"SWARM_LEASE_STORE=etcd://h:1", "SWARM_LEASE_ETCD_PASSWORD=" + password},
			[]string{"etcd_password (from environment variable SWARM_LEASE_ETCD_PASSWORD) is set without a user", "SWARM_LEASE_ETCD_USERNAME"}},
		{"a user without a password", flags(t, "--etcd-username", "alice"), []string{"SWARM_LEASE_STORE=etcd://h:1"},
			[]string{"etcd_username (from flag --etcd-username) is set without a password", "SWARM_LEASE_ETCD_PASSWORD_FILE"}},
		{"a missing CA file", flags(t, "--etcd-ca-file", "/nonexistent/ca.pem"), []string{"SWARM_LEASE_STORE=etcd://h:1"},
			[]string{"invalid etcd_ca_file (from flag --etcd-ca-file)", "/nonexistent/ca.pem does not exist"}},
		{"a CA file that is a directory", nil, []string{"SWARM_LEASE_STORE=etcd://h:1", "SWARM_LEASE_ETCD_CA_FILE=" + t.TempDir()},
			[]string{"invalid etcd_ca_file (from environment variable SWARM_LEASE_ETCD_CA_FILE)", "directory"}},
		{"a CA file that holds no certificate", nil, []string{"SWARM_LEASE_STORE=etcd://h:1", "SWARM_LEASE_ETCD_CA_FILE=" + notPEM},
			[]string{"invalid etcd_ca_file", notPEM + " holds no PEM certificate"}},
		{"a certificate without its key", nil, []string{"SWARM_LEASE_STORE=etcd://h:1", "SWARM_LEASE_ETCD_CA_FILE=" + ca, "SWARM_LEASE_ETCD_CERT_FILE=" + cert},
			[]string{"etcd_cert_file (from environment variable SWARM_LEASE_ETCD_CERT_FILE) is set without its key", "SWARM_LEASE_ETCD_KEY_FILE"}},
		{"a key without its certificate", flags(t, "--etcd-key-file", key), []string{"SWARM_LEASE_STORE=etcd://h:1"},
			[]string{"etcd_key_file (from flag --etcd-key-file) is set without its certificate"}},
		{"a key of another certificate", nil, []string{"SWARM_LEASE_STORE=etcd://h:1", "SWARM_LEASE_ETCD_CERT_FILE=" + cert, "SWARM_LEASE_ETCD_KEY_FILE=" + otherKey},
			[]string{"invalid etcd_cert_file", "etcd_key_file (from environment variable SWARM_LEASE_ETCD_KEY_FILE)", "not a PEM certificate and its private key"}},
		{"a dial timeout too short", nil, []string{"SWARM_LEASE_STORE=etcd://h:1", "SWARM_LEASE_ETCD_DIAL_TIMEOUT_MS=5"},
			[]string{`invalid etcd_dial_timeout_ms "5" (from environment variable SWARM_LEASE_ETCD_DIAL_TIMEOUT_MS)`}},
		{"a request timeout that is no number", flags(t), []string{"SWARM_LEASE_STORE=etcd://h:1", "SWARM_LEASE_ETCD_REQUEST_TIMEOUT_MS=soon"},
			[]string{`invalid etcd_request_timeout_ms "soon"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := loadEtcd(t, tc.fs, tc.vars...)
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
			if strings.Contains(err.Error(), password) || strings.Contains(err.Error(), "pa/") {
				t.Errorf("error %q quotes the password", err)
			}
		})
	}
	// A valid set of files is taken as is.
	c, err := loadEtcd(t, nil, "SWARM_LEASE_STORE=etcd://h:1", "SWARM_LEASE_ETCD_CA_FILE="+ca, "SWARM_LEASE_ETCD_CERT_FILE="+cert, "SWARM_LEASE_ETCD_KEY_FILE="+key)
	if err != nil || c.Etcd.CAFile != ca || c.Etcd.CertFile != cert || c.Etcd.KeyFile != key {
		t.Fatalf("TLS files: %+v, %v", c.Etcd, err)
	}
}

// TestSecretHasNoFlagNorLabel: the password has no flag — the parser's refusal of one is
// explained, without its value — and a container label that sets it is refused.
func TestSecretHasNoFlagNorLabel(t *testing.T) {
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	config.RegisterFlags(fs)
	if fs.Lookup("etcd-password") != nil {
		t.Fatal("--etcd-password is a flag")
	}
	for _, arg := range []string{"--etcd-password=" + password, "--etcd-password"} {
		perr := fs.Parse([]string{arg, password})
		if perr == nil {
			t.Fatalf("%s parsed", arg)
		}
		err := config.SecretFlag("APP", perr)
		if err == nil || !strings.Contains(err.Error(), "flag --etcd-password is refused") || !strings.Contains(err.Error(), "APP_ETCD_PASSWORD_FILE") ||
			strings.Contains(err.Error(), password) {
			t.Errorf("%s: %v", arg, err)
		}
	}
	if err := config.SecretFlag("", errors.New("unknown flag: --etcd-passwort")); err != nil {
		t.Errorf("another unknown flag: %v", err)
	}
	_, err := config.Loader{Environ: env("SWARM_LEASE_STORE=etcd://h:1", "SWARM_LEASE_ETCD_USERNAME=u"),
		Discover: task(map[string]string{"swarm-lease.etcd_password": password})}.Load(context.Background())
	if err == nil || !strings.Contains(err.Error(), "container label swarm-lease.etcd_password is refused") || strings.Contains(err.Error(), password) {
		t.Fatalf("a password in a label: %v", err)
	}
}

// TestMaxActiveRoomsDefaultIsTheStores: unset, the limit is left to the rooms engine, whose
// default depends on the store; set, 0 included, it is taken as is.
func TestMaxActiveRoomsDefaultIsTheStores(t *testing.T) {
	c, err := loadEtcd(t, nil, "SWARM_LEASE_STORE=etcd://h:1")
	if err != nil || c.Elections.MaxActiveRooms != nil {
		t.Fatalf("unset: %v, %v", c.Elections.MaxActiveRooms, err)
	}
	c, err = loadEtcd(t, nil, "SWARM_LEASE_STORE=etcd://h:1", "SWARM_LEASE_MAX_ACTIVE_ROOMS=0")
	if err != nil || c.Elections.MaxActiveRooms == nil || *c.Elections.MaxActiveRooms != 0 {
		t.Fatalf("0: %v, %v", c.Elections.MaxActiveRooms, err)
	}
}

func fmtV(v any) string { return fmt.Sprintf("%v %+v", v, v) }

// testPKI writes a CA, a client certificate it signed with its key, and another key.
func testPKI(t *testing.T) (ca, cert, key, otherKey string) {
	t.Helper()
	newKey := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	keyPEM := func(k *ecdsa.PrivateKey) []byte {
		der, err := x509.MarshalECPrivateKey(k)
		if err != nil {
			t.Fatal(err)
		}
		return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der})
	}
	caKey, clientKey := newKey(), newKey()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"}, NotBefore: time.Now().Add(-time.Hour),
		NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	clientTmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "client"}, NotBefore: time.Now().Add(-time.Hour),
		NotAfter: time.Now().Add(time.Hour), ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, KeyUsage: x509.KeyUsageDigitalSignature}
	clientDER, err := x509.CreateCertificate(rand.Reader, clientTmpl, caTmpl, &clientKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	return writeFile(t, "ca.pem", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})),
		writeFile(t, "client.pem", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: clientDER})),
		writeFile(t, "client-key.pem", keyPEM(clientKey)),
		writeFile(t, "other-key.pem", keyPEM(newKey()))
}
