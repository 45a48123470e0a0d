package etcdtest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
)

// TLSFiles are PEM files of a test CA and of a client certificate it signed.
type TLSFiles struct {
	// CA is the CA's certificate, which signed the member's certificate and Cert.
	CA string
	// Cert and Key are the client's certificate and private key.
	Cert, Key string
}

// EmbeddedTLS starts a single-member etcd like Embedded whose clients must speak TLS and show a
// certificate signed by its CA. It returns the member's endpoint ("127.0.0.1:PORT", a name its
// certificate holds) and the files of the CA and of a client certificate.
func EmbeddedTLS(t testing.TB) (string, TLSFiles) {
	t.Helper()
	dir := t.TempDir()
	files, server := writePKI(t, dir)
	var lastErr error
	for range 5 { // a free port can be taken between choosing it and listening on it
		ep, err := startEmbedded(t, &transport.TLSInfo{CertFile: server.Cert, KeyFile: server.Key, TrustedCAFile: files.CA, ClientCertAuth: true})
		if err == nil {
			return ep, files
		}
		lastErr = err
	}
	t.Fatalf("start an embedded etcd with TLS: %v", lastErr)
	return "", TLSFiles{}
}

// writePKI writes, in dir, a CA, a client certificate and a server certificate for 127.0.0.1,
// both signed by the CA, valid for a day.
func writePKI(t testing.TB, dir string) (client, server TLSFiles) {
	t.Helper()
	write := func(name, typ string, der []byte) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	newKey := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	caKey := newKey()
	ca := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "etcdtest CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caFile := write("ca.pem", "CERTIFICATE", caDER)
	issue := func(name string, serial int64, tmpl *x509.Certificate) TLSFiles {
		key := newKey()
		tmpl.SerialNumber, tmpl.Subject = big.NewInt(serial), pkix.Name{CommonName: name}
		tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-time.Hour), time.Now().Add(24*time.Hour)
		tmpl.KeyUsage = x509.KeyUsageDigitalSignature
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		keyDER, err := x509.MarshalECPrivateKey(key)
		if err != nil {
			t.Fatal(err)
		}
		return TLSFiles{CA: caFile, Cert: write(name+".pem", "CERTIFICATE", der), Key: write(name+"-key.pem", "EC PRIVATE KEY", keyDER)}
	}
	client = issue("client", 2, &x509.Certificate{ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	server = issue("server", 3, &x509.Certificate{ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}})
	return client, server
}
