package yamldoc

import (
	"bytes"

	"github.com/adrg/frontmatter"
	"gopkg.in/yaml.v3"
)

// Codec gives the engine this package's readers and writers (engine.Config.YAML).
type Codec struct{}

// MilestoneFrontMatter reads the title, name and status that the read protocol's last resort
// wants from the front matter of a documentation/milestones/_active/*.md file (seed 001); a
// file without front matter gives empty strings and no error.
func (Codec) MilestoneFrontMatter(data []byte) (title, name, status string, err error) {
	var m struct {
		Title  string `yaml:"title"`
		Name   string `yaml:"name"`
		Status string `yaml:"status"`
	}
	_, err = frontmatter.Parse(bytes.NewReader(withoutBOM(data)), &m, frontmatter.NewFormat("---", "---", yaml.Unmarshal))
	return m.Title, m.Name, m.Status, err
}

// withoutBOM drops a UTF-8 byte order mark, which editors on Windows write: adrg/frontmatter
// would take it for text before the opening "---".
func withoutBOM(data []byte) []byte { return bytes.TrimPrefix(data, []byte("\ufeff")) }
