package label

import (
	"encoding/json"
	"testing"
)

// TestAppendMeta holds the compact _meta encoding byte for byte: no
// spaces, no buckets, the rules last; and valid JSON whatever the strings.
func TestAppendMeta(t *testing.T) {
	tests := []struct {
		name string
		t    ToolLabels
		want string
	}{
		{"empty", ToolLabels{Classes: []string{}, RequiredClasses: []string{}},
			`{"classes":[],"required_classes":[],"properties":[],"rules":"r-01"}`},
		{"two properties", ToolLabels{
			Classes: []string{"gg:command-string", "gg:url"}, RequiredClasses: []string{"gg:url"},
			Buckets: []string{"left out"},
			Properties: []PropertyLabels{
				{Name: "cmd", Where: "properties", Classes: []string{"gg:command-string"}, Buckets: []string{"left out"}},
				{Name: "u", Where: "$defs/A", Required: true, Classes: []string{"gg:url"}},
			}},
			`{"classes":["gg:command-string","gg:url"],"required_classes":["gg:url"],"properties":[` +
				`{"name":"cmd","where":"properties","required":false,"classes":["gg:command-string"]},` +
				`{"name":"u","where":"$defs/A","required":true,"classes":["gg:url"]}],"rules":"r-01"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := string(tc.t.AppendMeta([]byte("prefix:"), "r-01"))
			if got != "prefix:"+tc.want {
				t.Errorf("AppendMeta = %s\nwant          prefix:%s", got, tc.want)
			}
		})
	}
	odd := ToolLabels{Classes: []string{}, RequiredClasses: []string{}, Properties: []PropertyLabels{
		{Name: "q\"\\\u2028\x01é\U0001F600", Where: "properties", Classes: []string{}},
	}}
	b := odd.AppendMeta(nil, "r")
	var back struct {
		Properties []PropertyLabels `json:"properties"`
	}
	if err := json.Unmarshal(b, &back); err != nil || len(back.Properties) != 1 || back.Properties[0].Name != odd.Properties[0].Name {
		t.Errorf("AppendMeta of an odd name: %s (%v)", b, err)
	}
}
