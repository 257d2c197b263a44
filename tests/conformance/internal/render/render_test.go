package render

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestParseSkipsEmptyAndCommentDocuments(t *testing.T) {
	data := []byte("# header\n---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n---\n# only a comment\n---\n" +
		"apiVersion: v1\nkind: Namespace\nmetadata:\n  name: b\n")
	docs, err := Parse("ns.yaml", data)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range docs {
		got = append(got, d.String())
	}
	want := []string{"ns.yaml: Namespace a", "ns.yaml#1: Namespace b"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestParseRejectsDocumentWithoutKind(t *testing.T) {
	_, err := Parse("x.yaml", []byte("apiVersion: v1\nmetadata:\n  name: a\n"))
	if err == nil || err.Error() != "x.yaml: document 0 has no apiVersion or kind" {
		t.Fatalf("got %v", err)
	}
}

func TestLoadRequiresManifests(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "manifests"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := Load("dev", dir)
	want := "render dev: no objects in " + filepath.Join(dir, "manifests")
	if err == nil || err.Error() != want {
		t.Fatalf("got %v, want %q", err, want)
	}
}
