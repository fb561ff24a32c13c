package yamldoc

import "github.com/cairn-dev/cairn/internal/workflow"

// Codec gives the engine this package's readers and writers (engine.Config.YAML).
type Codec struct{}

// ParseDefinition reads a workflow definition file; see the package function.
func (Codec) ParseDefinition(file string, data []byte) (*workflow.Definition, error) {
	return ParseDefinition(file, data)
}

// ParseStatusDoc reads WORKFLOW-STATUS.yaml; see the package function.
func (Codec) ParseStatusDoc(data []byte) (*workflow.StatusDoc, error) { return ParseStatusDoc(data) }

// MarshalStatusDoc writes WORKFLOW-STATUS.yaml; see the package function.
func (Codec) MarshalStatusDoc(d workflow.StatusDoc) ([]byte, error) { return MarshalStatusDoc(d) }

// MilestoneFrontMatter reads the title, name and status of a milestone file's front matter.
func (Codec) MilestoneFrontMatter(data []byte) (title, name, status string, err error) {
	m, err := ParseMilestone(data)
	return m.Title, m.Name, m.Status, err
}
