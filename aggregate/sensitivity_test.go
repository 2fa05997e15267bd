package aggregate

import (
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/label/classify"
	"github.com/atlas-reproduce/atlas-reproduce/label/sensitivity"
)

func TestSensitivityAddMerge(t *testing.T) {
	var a, b Sensitivity
	a.Add(&sensitivity.Added{CamelCase: classify.CredentialValue, CamelCaseRequired: classify.CredentialValue,
		WordSplit: classify.FilesystemPath | classify.MoneyAmount, Deep: classify.URLEndpoint})
	a.Add(&sensitivity.Added{}) // nothing added: nothing counted
	b.Add(&sensitivity.Added{WordSplit: classify.FilesystemPath, WordSplitRequired: classify.FilesystemPath, Deep: classify.URLEndpoint | classify.CommandString})
	a.Merge(&b)
	// Bits: credential 0, filesystem 1, command 2, money 3, url 4.
	want := [3][5]int64{{1, 0, 0, 0, 0}, {0, 2, 0, 1, 0}, {0, 0, 1, 0, 2}}
	wantReq := [2][5]int64{{1, 0, 0, 0, 0}, {0, 1, 0, 0, 0}}
	if a.Tools != want || a.Required != wantReq {
		t.Errorf("tools %v required %v, want %v %v", a.Tools, a.Required, want, wantReq)
	}
}
