package workflows

import (
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/durableagent/durableagent/agent"
)

// MaxImageBytes bounds the base64 data of a prompt's images together. The
// images travel in the workflow input, which Temporal records in history
// and limits to 2 MB per payload; the rest is left for the settings.
const MaxImageBytes = 1 << 20

// CheckImages reports the first problem of a prompt's images in one line:
// a block that is not an image, a MIME type that is not image/*, data
// that is not base64, or more than MaxImageBytes in all.
func CheckImages(images []agent.ContentBlock) error {
	total := 0
	for i, img := range images {
		switch {
		case img.Type != agent.BlockImage:
			return fmt.Errorf("images[%d] has type %q, want %q", i, img.Type, agent.BlockImage)
		case !strings.HasPrefix(img.MimeType, "image/"):
			return fmt.Errorf("images[%d] has mimeType %q, want image/png, image/jpeg, image/gif or image/webp", i, img.MimeType)
		case img.Data == "":
			return fmt.Errorf("images[%d] has no data", i)
		}
		if _, err := base64.StdEncoding.DecodeString(img.Data); err != nil {
			return fmt.Errorf("images[%d] data is not base64: %v", i, err)
		}
		total += len(img.Data)
	}
	if total > MaxImageBytes {
		return fmt.Errorf("images are %d bytes of base64, at most %d (they travel in the workflow's history)", total, MaxImageBytes)
	}
	return nil
}
