// Package render loads the output of the project's offline render (`make render`,
// `python -m eks_gpu_platform.offline`) into unstructured Kubernetes objects for the conformance
// scenarios, and finds the inputs the suite is given through its environment:
//
//   - CONFORMANCE_REPO: the repository root (tests/upstream_facts/crds/, tests/fixtures/). Default: two
//     directories above tests/conformance (the Go tests run from their package directory).
//   - CONFORMANCE_RENDERS: a directory holding one render per stack, <dir>/<stack>/manifests/...
//     Default: `make render` (dev), `make render STACK=prod` and dev at Kubernetes 1.35 are
//     rendered into <repo>/build/ by the first test that asks (Default).
//   - CONFORMANCE_BAD: the known-bad renders tests/conformance/mutate.py writes,
//     <dir>/<mutation>/<stack>/....
//
// A render directory holds manifests/ (one object per file, or several YAML documents), examples/
// (the workloads users submit), helm/ (Helm values, not objects) and capacity.json.
package render

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// Doc is one YAML document of a render: the object and where it came from.
type Doc struct {
	File   string // path relative to the render directory, e.g. manifests/nodepool-general.yaml
	Index  int    // the document's position in its file, from 0
	Object *unstructured.Unstructured
}

// String names the document for messages: "manifests/nodepool-general.yaml: NodePool general".
func (d Doc) String() string {
	name := d.Object.GetName()
	if ns := d.Object.GetNamespace(); ns != "" {
		name = ns + "/" + name
	}
	where := d.File
	if d.Index > 0 {
		where = fmt.Sprintf("%s#%d", d.File, d.Index)
	}
	return fmt.Sprintf("%s: %s %s", where, d.Object.GetKind(), name)
}

// Render is one stack's render directory, loaded.
type Render struct {
	Stack     string
	Dir       string
	Manifests []Doc
	Examples  []Doc
}

// Load reads <dir>/manifests and <dir>/examples. A render without manifests/ is an error (a
// missing input is a failure, never a silent pass); examples/ may be absent.
func Load(stack, dir string) (*Render, error) {
	manifests, err := LoadDir(dir, "manifests")
	if err != nil {
		return nil, err
	}
	if len(manifests) == 0 {
		return nil, fmt.Errorf("render %s: no objects in %s", stack, filepath.Join(dir, "manifests"))
	}
	examples, err := LoadDir(dir, "examples")
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	return &Render{Stack: stack, Dir: dir, Manifests: manifests, Examples: examples}, nil
}

// All is the manifests followed by the examples.
func (r *Render) All() []Doc {
	return append(append([]Doc{}, r.Manifests...), r.Examples...)
}

// Kind is every manifest of the given kind, in file order.
func (r *Render) Kind(kinds ...string) []Doc {
	var out []Doc
	for _, d := range r.Manifests {
		for _, k := range kinds {
			if d.Object.GetKind() == k {
				out = append(out, d)
			}
		}
	}
	return out
}

// LoadDir reads every *.yaml / *.yml / *.json file under root/sub (recursively, sorted by path).
// Empty documents are skipped; a document without apiVersion or kind is an error naming the file.
func LoadDir(root, sub string) ([]Doc, error) {
	base := filepath.Join(root, sub)
	if _, err := os.Stat(base); err != nil {
		return nil, err
	}
	var files []string
	err := filepath.WalkDir(base, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch strings.ToLower(filepath.Ext(path)) {
		case ".yaml", ".yml", ".json":
			if !d.IsDir() {
				files = append(files, path)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	var out []Doc
	for _, f := range files {
		rel, _ := filepath.Rel(root, f)
		docs, err := LoadFile(f)
		if err != nil {
			return nil, err
		}
		for i := range docs {
			docs[i].File = rel
		}
		out = append(out, docs...)
	}
	return out, nil
}

// LoadFile reads the YAML (or JSON) documents of one file. Doc.File is the path as given.
func LoadFile(path string) ([]Doc, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, data)
}

// Parse splits data into YAML documents and decodes each into an unstructured object.
func Parse(name string, data []byte) ([]Doc, error) {
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var out []Doc
	for index := 0; ; index++ {
		raw, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", name, index, err)
		}
		if len(bytes.TrimSpace(stripComments(raw))) == 0 {
			index--
			continue
		}
		obj := map[string]any{}
		if err := yaml.Unmarshal(raw, &obj); err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", name, index, err)
		}
		if len(obj) == 0 {
			index--
			continue
		}
		u := &unstructured.Unstructured{Object: obj}
		if u.GetAPIVersion() == "" || u.GetKind() == "" {
			return nil, fmt.Errorf("%s: document %d has no apiVersion or kind", name, index)
		}
		out = append(out, Doc{File: name, Index: index, Object: u})
	}
	return out, nil
}

func stripComments(raw []byte) []byte {
	var b bytes.Buffer
	for _, line := range bytes.Split(raw, []byte("\n")) {
		if t := bytes.TrimSpace(line); len(t) > 0 && t[0] != '#' && !bytes.Equal(t, []byte("---")) {
			b.Write(line)
			b.WriteByte('\n')
		}
	}
	return b.Bytes()
}
