package runners

import (
	"reflect"
	"testing"
)

func TestParseNPMConfig(t *testing.T) {
	for _, tc := range []struct {
		name, json string
		want       npmConfig
	}{
		{"defaults", `{"registry":"https://registry.npmjs.org/","cafile":null,"ca":null,"https-proxy":null,"proxy":null,"noproxy":[""],"strict-ssl":true}`,
			npmConfig{Registry: "https://registry.npmjs.org/", StrictSSL: true}},
		{"private", `{"registry":"https://npm.corp/","cafile":"/etc/corp.pem","ca":["PEM1","PEM2"],"https-proxy":"http://p:3128","proxy":"http://q:80","noproxy":["a","b"],"strict-ssl":false}`,
			npmConfig{Registry: "https://npm.corp/", CAFile: "/etc/corp.pem", CA: []string{"PEM1", "PEM2"}, HTTPSProxy: "http://p:3128", Proxy: "http://q:80", NoProxy: "a,b"}},
		{"one ca, no registry", `{"ca":"PEM","noproxy":"x"}`, npmConfig{Registry: "https://registry.npmjs.org/", CA: []string{"PEM"}, NoProxy: "x", StrictSSL: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseNPMConfig([]byte(tc.json))
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

func TestNPMConfigUpstream(t *testing.T) {
	for _, tc := range []struct {
		conf npmConfig
		want string
	}{
		{npmConfig{Registry: "https://r.example/", HTTPSProxy: "http://hp:3128", Proxy: "http://p:80"}, "http://hp:3128"},
		{npmConfig{Registry: "http://r.example/", HTTPSProxy: "http://hp:3128", Proxy: "p:80"}, "http://p:80"},
		{npmConfig{Registry: "https://r.example/", Proxy: "http://p:80"}, "http://p:80"},
		{npmConfig{Registry: "https://npm.r.example/", HTTPSProxy: "http://hp:3128", NoProxy: ".r.example"}, ""},
		{npmConfig{Registry: "https://r.example/"}, ""},
	} {
		u, err := tc.conf.upstream()
		got := ""
		if u != nil {
			got = u.String()
		}
		if err != nil || got != tc.want {
			t.Errorf("%+v: upstream %q, %v; want %q", tc.conf, got, err, tc.want)
		}
	}
}
