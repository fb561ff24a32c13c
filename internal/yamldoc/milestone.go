package yamldoc

import (
	"bytes"

	"github.com/adrg/frontmatter"
	"gopkg.in/yaml.v3"
)

// Milestone is what the read protocol's last resort wants from the front matter of a
// documentation/milestones/_active/*.md file (seed 001).
type Milestone struct {
	Title  string `yaml:"title"`
	Name   string `yaml:"name"`
	Status string `yaml:"status"`
}

// ParseMilestone reads a milestone file's front matter; a file without one gives the zero
// Milestone and no error.
func ParseMilestone(data []byte) (Milestone, error) {
	var m Milestone
	_, err := frontmatter.Parse(bytes.NewReader(data), &m, frontmatter.NewFormat("---", "---", yaml.Unmarshal))
	return m, err
}
