package render

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"

	"sigs.k8s.io/yaml"
)

// The environment variables of the contract between `make conformance` and the Go tests.
const (
	EnvRepo    = "CONFORMANCE_REPO"
	EnvRenders = "CONFORMANCE_RENDERS"
	EnvBad     = "CONFORMANCE_BAD"
)

// Older is the stack name of dev rendered at Kubernetes 1.35, where the do-not-disrupt policies are
// ValidatingAdmissionPolicies (tests/conformance/stacks.py writes the same stack).
const Older = "dev-1.35"

// Repo is the repository root: $CONFORMANCE_REPO, else the directory holding tests/conformance
// above the working directory (go test runs in the package directory).
func Repo() (string, error) {
	if dir := os.Getenv(EnvRepo); dir != "" {
		if _, err := os.Stat(filepath.Join(dir, "tests", "conformance", "go.mod")); err != nil {
			return "", fmt.Errorf("%s=%s is not the repository root (no tests/conformance/go.mod): %w", EnvRepo, dir, err)
		}
		return filepath.Abs(dir)
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := dir; d != filepath.Dir(d); d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "tests", "conformance", "go.mod")); err == nil {
			return d, nil
		}
	}
	return "", fmt.Errorf("%s is unset and no directory above %s holds tests/conformance/go.mod", EnvRepo, dir)
}

// Stacks lists the renders the suite judges: the directories of root holding manifests/, sorted.
func Stacks(root string) ([]string, error) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, fmt.Errorf("renders: %w", err)
	}
	var out []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		if st, err := os.Stat(filepath.Join(root, e.Name(), "manifests")); err == nil && st.IsDir() {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	if len(out) == 0 {
		return nil, fmt.Errorf("renders: no <stack>/manifests/ under %s", root)
	}
	return out, nil
}

var (
	defaultOnce  sync.Once
	defaultRoot  string
	defaultNames []string
	defaultErr   error
)

// Renders is the directory of renders and the stacks in it: $CONFORMANCE_RENDERS and every stack
// under it, else the default renders (dev, prod, dev at 1.35) made in <repo>/build by `make render`.
func Renders() (string, []string, error) {
	if dir := os.Getenv(EnvRenders); dir != "" {
		stacks, err := Stacks(dir)
		return dir, stacks, err
	}
	defaultOnce.Do(func() { defaultRoot, defaultNames, defaultErr = renderDefaults() })
	return defaultRoot, defaultNames, defaultErr
}

// Bad is $CONFORMANCE_BAD (the known-bad renders); unset is an error saying how to make them.
func Bad() (string, error) {
	dir := os.Getenv(EnvBad)
	if dir == "" {
		return "", fmt.Errorf("%s is unset: write the known-bad renders with "+
			"`python tests/conformance/mutate.py <renders> <out>` (make conformance does)", EnvBad)
	}
	if _, err := os.Stat(dir); err != nil {
		return "", fmt.Errorf("%s: %w", EnvBad, err)
	}
	return dir, nil
}

// renderDefaults runs `make render` for dev and prod and renders dev at Kubernetes 1.35 (a copy of
// the fixture stack tests/fixtures/stacks/Pulumi.dev.yaml with cluster.kubernetesVersion "1.35",
// through --config-file), into <repo>/build.
// A lock file serialises the packages' test binaries, which go test runs in parallel.
func renderDefaults() (string, []string, error) {
	repo, err := Repo()
	if err != nil {
		return "", nil, err
	}
	build := filepath.Join(repo, "build")
	if err := os.MkdirAll(build, 0o755); err != nil {
		return "", nil, err
	}
	lock, err := os.OpenFile(filepath.Join(build, ".conformance-render.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", nil, err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return "", nil, err
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN) //nolint:errcheck

	stackFile := filepath.Join(build, "Pulumi."+Older+".yaml")
	if err := writeOlderStack(filepath.Join(repo, "tests", "fixtures", "stacks", "Pulumi.dev.yaml"), stackFile); err != nil {
		return "", nil, err
	}
	runs := [][]string{
		{"make", "render"},
		{"make", "render", "STACK=prod"},
		{"make", "render", "STACK=" + Older, "CONFIG_FILE=" + stackFile, "OUT=" + filepath.Join(build, Older)},
	}
	for _, args := range runs {
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir = repo
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", nil, fmt.Errorf("%s (%s unset, so the suite renders its own inputs): %w\n%s",
				strings.Join(args, " "), EnvRenders, err, out)
		}
	}
	return build, []string{"dev", "prod", Older}, nil
}

func writeOlderStack(src, dst string) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	var stack map[string]any
	if err := yaml.Unmarshal(data, &stack); err != nil {
		return fmt.Errorf("%s: %w", src, err)
	}
	config, _ := stack["config"].(map[string]any)
	cluster, _ := config["eks-gpu-platform:cluster"].(map[string]any)
	if cluster == nil {
		return fmt.Errorf("%s: no config key eks-gpu-platform:cluster", src)
	}
	cluster["kubernetesVersion"] = "1.35"
	out, err := yaml.Marshal(stack)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, out, 0o644)
}
