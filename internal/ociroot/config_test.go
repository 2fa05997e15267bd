package ociroot

import (
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/random"
)

// hugeConfig declares a config blob far past any real one; reading it
// must fail from the declaration alone, before a byte of it is fetched.
type hugeConfig struct{ v1.Image }

func (h hugeConfig) Manifest() (*v1.Manifest, error) {
	m, err := h.Image.Manifest()
	if err != nil {
		return nil, err
	}
	c := *m
	c.Config.Size = 8 << 30
	return &c, nil
}

func (hugeConfig) ConfigFile() (*v1.ConfigFile, error) {
	panic("the config blob was read although its declared size is past the bound")
}

func TestImagesConfigBound(t *testing.T) {
	img, err := random.Image(64, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := imageConfig(img); err != nil {
		t.Fatalf("an image with a small config: %v", err)
	}
	_, err = imageConfig(hugeConfig{img})
	if err == nil || !strings.Contains(err.Error(), "declared") {
		t.Fatalf("a config of 8 GiB declared: err = %v, want a refusal", err)
	}
}
