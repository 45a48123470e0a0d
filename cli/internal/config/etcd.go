package config

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease/etcdstore"
	"github.com/regbo/lfp-swarm-lease/settings"
)

// maxPEMFile bounds the CA bundle, certificate and key files of the etcd store: a system's whole
// CA bundle is far below it, while a wrong path (a log, a device) is refused before it is read.
const maxPEMFile = 1 << 20

// minEtcdTimeout is the shortest dial or request timeout: below it a loaded cluster's answers
// would count as failures.
const minEtcdTimeout = 100 * time.Millisecond

// buildEtcd makes the etcd store's options from its URL (the store setting, already checked)
// and the etcd_* settings. The TLS files are read here, by settings.ReadFile's rule, so that a
// missing, unreadable or wrong file is a settings error naming the setting and its source rather
// than a failure of the first request; the store reads them again when it connects. No message
// quotes the password, nor a file's content.
func buildEtcd(prefix string, o options, source func(string) Source, millis func(string, int64, time.Duration) time.Duration) (etcdstore.Options, error) {
	e, err := parseEtcdURL(o.Store)
	if err != nil {
		return e, err
	}
	e.DialTimeout = millis(KeyEtcdDialTimeoutMs, o.EtcdDialTimeoutMs, minEtcdTimeout)
	e.RequestTimeout = millis(KeyEtcdRequestTimeoutMs, o.EtcdRequestTimeoutMs, minEtcdTimeout)
	e.CAFile, e.CertFile, e.KeyFile = o.EtcdCAFile, o.EtcdCertFile, o.EtcdKeyFile
	e.Username, e.Password = o.EtcdUsername, o.EtcdPassword

	s := schema(prefix)
	named := func(key string) string { return fmt.Sprintf("%s (from %s)", key, source(key)) }
	var errs []error
	switch {
	case e.Username != "" && e.Password == "":
		errs = append(errs, fmt.Errorf("%s is set without a password: set %s (naming a file that holds it) or %s",
			named(KeyEtcdUsername), s.FileVariable(KeyEtcdPassword), s.Variable(KeyEtcdPassword)))
	case e.Username == "" && e.Password != "":
		errs = append(errs, fmt.Errorf("%s is set without a user: set %s or --%s", named(KeyEtcdPassword), s.Variable(KeyEtcdUsername), FlagName(KeyEtcdUsername)))
	}

	read := func(key, path string) ([]byte, bool) {
		data, err := settings.ReadFile(path, maxPEMFile)
		if err != nil {
			errs = append(errs, fmt.Errorf("invalid %s: %w", named(key), err))
			return nil, false
		}
		return data, true
	}
	if e.CAFile != "" {
		if pem, ok := read(KeyEtcdCAFile, e.CAFile); ok && !x509.NewCertPool().AppendCertsFromPEM(pem) {
			errs = append(errs, fmt.Errorf("invalid %s: %s holds no PEM certificate: give the PEM bundle of the CA that signed the etcd members' certificates",
				named(KeyEtcdCAFile), e.CAFile))
		}
	}
	switch {
	case e.CertFile != "" && e.KeyFile == "":
		errs = append(errs, fmt.Errorf("%s is set without its key: set %s or --%s too", named(KeyEtcdCertFile), s.Variable(KeyEtcdKeyFile), FlagName(KeyEtcdKeyFile)))
	case e.CertFile == "" && e.KeyFile != "":
		errs = append(errs, fmt.Errorf("%s is set without its certificate: set %s or --%s too", named(KeyEtcdKeyFile), s.Variable(KeyEtcdCertFile), FlagName(KeyEtcdCertFile)))
	case e.CertFile != "":
		cert, certOK := read(KeyEtcdCertFile, e.CertFile)
		key, keyOK := read(KeyEtcdKeyFile, e.KeyFile)
		if certOK && keyOK {
			// X509KeyPair's errors say what is wrong, never what the files hold.
			if _, err := tls.X509KeyPair(cert, key); err != nil {
				errs = append(errs, fmt.Errorf("invalid %s and %s: %s and %s are not a PEM certificate and its private key: %v",
					named(KeyEtcdCertFile), named(KeyEtcdKeyFile), e.CertFile, e.KeyFile, err))
			}
		}
	}
	return e, errors.Join(errs...)
}
