package runners

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/atlas-reproduce/atlas-reproduce/crawl/internal/outtext"
)

// npmConfig is what of the machine's npm configuration an install in the
// sandbox gets: the registry, the CA files, the proxy and strict-ssl.
// Nothing else of the host's npm configuration (tokens, scripts, prefix)
// reaches the sandbox.
type npmConfig struct {
	Registry   string
	CAFile     string // npm's cafile: replaces node's CAs for npm
	CA         []string
	ExtraCA    string // NODE_EXTRA_CA_CERTS: added to node's CAs
	HTTPSProxy string
	Proxy      string
	NoProxy    string
	StrictSSL  bool
}

// readNPMConfig reads npm's effective configuration as npm itself
// computes it (npm_config_* variables, the user's and the global npmrc),
// so that no rule of npm's is guessed here.
func readNPMConfig(ctx context.Context, npm string) (npmConfig, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "config", "list", "--json")
	// npm reads its project config from the folder it runs in: the
	// crawl's folder is no npm project of the user's.
	cmd.Dir = os.TempDir()
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return npmConfig{}, fmt.Errorf("npm config list: %w: %s", err, outtext.FirstLines(string(ee.Stderr), 3))
		}
		return npmConfig{}, fmt.Errorf("npm config list: %w", err)
	}
	c, err := parseNPMConfig(out)
	if err != nil {
		return npmConfig{}, fmt.Errorf("npm config list: %w", err)
	}
	c.ExtraCA = os.Getenv("NODE_EXTRA_CA_CERTS")
	return c, nil
}

// parseNPMConfig reads the keys of npmConfig from the JSON of npm config
// list --json.
func parseNPMConfig(b []byte) (npmConfig, error) {
	var raw struct {
		Registry   string          `json:"registry"`
		CAFile     *string         `json:"cafile"`
		CA         json.RawMessage `json:"ca"`
		HTTPSProxy *string         `json:"https-proxy"`
		Proxy      *string         `json:"proxy"`
		NoProxy    json.RawMessage `json:"noproxy"`
		StrictSSL  *bool           `json:"strict-ssl"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return npmConfig{}, err
	}
	c := npmConfig{Registry: raw.Registry, StrictSSL: raw.StrictSSL == nil || *raw.StrictSSL}
	if c.Registry == "" {
		c.Registry = "https://registry.npmjs.org/"
	}
	if raw.CAFile != nil {
		c.CAFile = *raw.CAFile
	}
	if raw.HTTPSProxy != nil {
		c.HTTPSProxy = *raw.HTTPSProxy
	}
	if raw.Proxy != nil {
		c.Proxy = *raw.Proxy
	}
	var ca, noProxy string
	var cas, noProxies []string
	switch {
	case json.Unmarshal(raw.CA, &ca) == nil && ca != "":
		c.CA = []string{ca}
	case json.Unmarshal(raw.CA, &cas) == nil:
		c.CA = cas
	}
	switch {
	case json.Unmarshal(raw.NoProxy, &noProxy) == nil:
		c.NoProxy = noProxy
	case json.Unmarshal(raw.NoProxy, &noProxies) == nil:
		c.NoProxy = strings.Join(noProxies, ",")
	}
	return c, nil
}

// upstream is the host's proxy to the registry, or nil: npm's
// https-proxy for an https registry, else its proxy, unless noproxy
// names the registry's host.
func (c npmConfig) upstream() (*url.URL, error) {
	reg, err := url.Parse(c.Registry)
	if err != nil {
		return nil, fmt.Errorf("npm registry %q: %w", c.Registry, err)
	}
	for _, h := range strings.Split(c.NoProxy, ",") {
		h = strings.TrimPrefix(strings.TrimSpace(h), ".")
		if h != "" && (reg.Hostname() == h || strings.HasSuffix(reg.Hostname(), "."+h)) {
			return nil, nil
		}
	}
	p := c.Proxy
	if reg.Scheme == "https" && c.HTTPSProxy != "" {
		p = c.HTTPSProxy
	}
	if p == "" {
		return nil, nil
	}
	if !strings.Contains(p, "://") {
		p = "http://" + p
	}
	u, err := url.Parse(p)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("npm's proxy %q is not a proxy URL", p)
	}
	return u, nil
}

// caFiles in the sandbox: the copies of the host's CA files an install
// reads, in a folder of the package cache shown read-only.
const (
	caDir        = ".npm-ca"
	caMount      = "/npm-ca"
	caFileName   = "cafile.pem"
	extraCAName  = "extra.pem"
	maxCAFileLen = 16 << 20
)

// copyCAs copies the CA files of c (and its inline ca) into dir, readable
// by the sandbox, and returns the environment that points npm and node at
// the copies.
func (c npmConfig) copyCAs(dir string) ([]string, error) {
	_ = os.RemoveAll(dir)
	if c.CAFile == "" && len(c.CA) == 0 && c.ExtraCA == "" {
		return nil, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var env []string
	var pem []byte
	if c.CAFile != "" {
		b, err := readCA(c.CAFile, "npm's cafile")
		if err != nil {
			return nil, err
		}
		pem = b
	}
	for _, ca := range c.CA {
		pem = append(append(pem, '\n'), ca...)
		pem = append(pem, '\n')
	}
	if pem != nil {
		if err := os.WriteFile(filepath.Join(dir, caFileName), pem, 0o444); err != nil {
			return nil, err
		}
		env = append(env, "npm_config_cafile="+caMount+"/"+caFileName)
	}
	if c.ExtraCA != "" {
		b, err := readCA(c.ExtraCA, "NODE_EXTRA_CA_CERTS")
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(dir, extraCAName), b, 0o444); err != nil {
			return nil, err
		}
		env = append(env, "NODE_EXTRA_CA_CERTS="+caMount+"/"+extraCAName)
	}
	return env, nil
}

func readCA(file, what string) ([]byte, error) {
	st, err := os.Stat(file)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if st.Size() > maxCAFileLen {
		return nil, fmt.Errorf("%s %s: %d bytes is no CA file", what, file, st.Size())
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if !x509.NewCertPool().AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("%s %s holds no PEM certificate", what, file)
	}
	return b, nil
}

// tlsConfig is how npm in the sandbox checks the registry's certificate:
// npm's cafile (or ca) instead of the usual CAs, NODE_EXTRA_CA_CERTS
// besides them, nothing checked without strict-ssl. Go's usual CAs are
// the system's, where node carries Mozilla's: Debian's are those.
func (c npmConfig) tlsConfig() (*tls.Config, error) {
	if !c.StrictSSL {
		return &tls.Config{InsecureSkipVerify: true}, nil // npm's strict-ssl=false, the user's choice
	}
	var pool *x509.CertPool
	if c.CAFile != "" || len(c.CA) > 0 {
		pool = x509.NewCertPool()
		for _, ca := range c.CA {
			pool.AppendCertsFromPEM([]byte(ca))
		}
	} else if c.ExtraCA != "" {
		var err error
		if pool, err = x509.SystemCertPool(); err != nil {
			pool = x509.NewCertPool()
		}
	}
	for _, f := range []struct{ file, what string }{{c.CAFile, "npm's cafile"}, {c.ExtraCA, "NODE_EXTRA_CA_CERTS"}} {
		if f.file == "" {
			continue
		}
		b, err := readCA(f.file, f.what)
		if err != nil {
			return nil, err
		}
		pool.AppendCertsFromPEM(b)
	}
	return &tls.Config{RootCAs: pool}, nil
}

// checkRegistryTLS reaches the registry once as npm in the sandbox would
// (through the host's proxy, with npm's CAs and strict-ssl) and fails at
// once when its certificate is not trusted: npm would retry each install
// for over a minute and then fail with a code alone. Other failures are
// left to the installs, which record them per package.
func (c npmConfig) checkRegistryTLS(ctx context.Context) error {
	reg, err := url.Parse(c.Registry)
	if err != nil || reg.Scheme != "https" {
		return nil
	}
	tc, err := c.tlsConfig()
	if err != nil {
		return err
	}
	up, err := c.upstream()
	if err != nil {
		return err
	}
	tr := &http.Transport{TLSClientConfig: tc, Proxy: func(*http.Request) (*url.URL, error) { return up, nil },
		TLSHandshakeTimeout: 30 * time.Second, ResponseHeaderTimeout: 30 * time.Second}
	defer tr.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodHead, c.Registry, nil)
	if err != nil {
		return err
	}
	resp, err := tr.RoundTrip(req)
	if err == nil {
		resp.Body.Close()
		return nil
	}
	var (
		unknown  x509.UnknownAuthorityError
		invalid  x509.CertificateInvalidError
		hostname x509.HostnameError
		verify   *tls.CertificateVerificationError
	)
	if errors.As(err, &unknown) || errors.As(err, &invalid) || errors.As(err, &hostname) || errors.As(err, &verify) {
		return fmt.Errorf("the npm registry %s presents a certificate npm would not trust: %v (npm's cafile %q, NODE_EXTRA_CA_CERTS %q, strict-ssl %v; installs in the sandbox use these, set them in npm's config)",
			c.Registry, err, c.CAFile, c.ExtraCA, c.StrictSSL)
	}
	return nil
}
