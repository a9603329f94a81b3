package k8s

import (
	"encoding/json"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/pkg/pipeline"
	"github.com/graphrag/graphrag/pkg/platform"
	"github.com/graphrag/graphrag/pkg/service"
	"github.com/graphrag/graphrag/services/extractor"
	"github.com/graphrag/graphrag/services/grapher"
	"github.com/graphrag/graphrag/services/query"
	"github.com/graphrag/graphrag/services/summarizer"
)

// The backends of the service binaries as their mains declare them: drivers by name
// only (Register reads no more), so this module links no store client.
var (
	graphDrivers  = []platform.GraphDriver{{Name: platform.Embedded}, {Name: platform.Neo4j}}
	vectorDrivers = []platform.VectorDriver{{Name: platform.Embedded}, {Name: platform.Milvus}}
	stageNeeds    = platform.Needs{Bus: true, Model: true, Graph: graphDrivers, Vectors: vectorDrivers}
	// graphrag up also starts a NATS server when -nats-url is empty.
	upNeeds = platform.Needs{Bus: true, Model: true, Graph: graphDrivers, Vectors: vectorDrivers, NATSServer: func(platform.NATSServerConfig) (string, func(), error) {
		return "", nil, nil
	}}
)

// flagSet registers what a service process registers (common, backend and its own flags)
// and returns the set with pointers to the common and backend values.
func flagSet(needs platform.Needs, register ...func(fs *flag.FlagSet)) (*flag.FlagSet, *service.CommonFlags, *platform.BackendFlags) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var c service.CommonFlags
	var b platform.BackendFlags
	c.Register(fs)
	b.Register(fs, needs)
	for _, r := range register {
		r(fs)
	}
	return fs, &c, &b
}

// serviceFlagSets builds, per image repository, a fresh flag set of the binary in it.
func serviceFlagSets() map[string]func() (*flag.FlagSet, *service.CommonFlags, *platform.BackendFlags) {
	return map[string]func() (*flag.FlagSet, *service.CommonFlags, *platform.BackendFlags){
		"ghcr.io/graphrag/extractor": func() (*flag.FlagSet, *service.CommonFlags, *platform.BackendFlags) {
			c := extractor.DefaultConfig()
			return flagSet(platform.Needs{Bus: true, Model: true, Vectors: vectorDrivers}, c.RegisterFlags)
		},
		"ghcr.io/graphrag/grapher": func() (*flag.FlagSet, *service.CommonFlags, *platform.BackendFlags) {
			c := grapher.DefaultConfig()
			return flagSet(stageNeeds, c.RegisterFlags)
		},
		"ghcr.io/graphrag/summarizer": func() (*flag.FlagSet, *service.CommonFlags, *platform.BackendFlags) {
			c := summarizer.DefaultConfig()
			return flagSet(stageNeeds, c.RegisterFlags)
		},
		"ghcr.io/graphrag/query": func() (*flag.FlagSet, *service.CommonFlags, *platform.BackendFlags) {
			c := query.DefaultConfig() // the engine's and the HTTP API's flags
			return flagSet(stageNeeds, c.RegisterFlags)
		},
		// `graphrag up` registers the four services' flags (and -demo, -examples, -corpus,
		// which the manifests do not use).
		"ghcr.io/graphrag/graphrag": func() (*flag.FlagSet, *service.CommonFlags, *platform.BackendFlags) {
			ex, gr, su, qu := extractor.DefaultConfig(), grapher.DefaultConfig(), summarizer.DefaultConfig(), query.DefaultConfig()
			return flagSet(upNeeds, ex.RegisterFlags, gr.RegisterFlags, su.RegisterFlags, qu.RegisterFlags)
		},
	}
}

func checkOptions() []Option {
	opts := []Option{
		WithSharded("graphrag-grapher", "GRAPHRAG_SHARDS"),
		WithQueue("graphrag-extractor", pipeline.StreamName(events.KindChunks), pipeline.Durable(pipeline.StageExtractor)),
		WithQueue("graphrag-summarizer", pipeline.StreamName(events.KindCommunities), pipeline.Durable(pipeline.StageSummarizer)),
	}
	for repo, mk := range serviceFlagSets() {
		fs, _, _ := mk()
		var names []string
		fs.VisitAll(func(f *flag.Flag) { names = append(names, service.EnvVarName(platform.EnvPrefix, f.Name)) })
		opts = append(opts, WithKnownEnv(repo, names...))
	}
	return opts
}

func kinds(objs []Object) map[string]int {
	m := map[string]int{}
	for _, o := range objs {
		m[o.Kind]++
	}
	return m
}

func find(objs []Object, kind, name string) (Object, bool) {
	for _, o := range objs {
		if o.Kind == kind && o.Name == name {
			return o, true
		}
	}
	return Object{}, false
}

func TestManifests(t *testing.T) {
	tests := []struct {
		name string
		dir  func(t *testing.T) string
		// want counts of kinds that define the variant
		want map[string]int
	}{
		{"dev", func(*testing.T) string { return "overlays/dev" },
			map[string]int{"Deployment": 1, "StatefulSet": 1, "PodDisruptionBudget": 2, "NetworkPolicy": 2, "ScaledObject": 0, "Secret": 0}},
		{"production", func(*testing.T) string { return "overlays/production" },
			map[string]int{"Deployment": 4, "PodDisruptionBudget": 4, "NetworkPolicy": 4, "ScaledObject": 2, "HorizontalPodAutoscaler": 0, "ServiceMonitor": 1, "Secret": 0}},
		{"production-hpa", func(*testing.T) string { return "overlays/production-hpa" },
			map[string]int{"Deployment": 4, "ScaledObject": 0, "HorizontalPodAutoscaler": 3, "ServiceMonitor": 1, "Secret": 0}},
		{"production-keda-prometheus", func(*testing.T) string { return "overlays/production-keda-prometheus" },
			map[string]int{"Deployment": 4, "ScaledObject": 2, "HorizontalPodAutoscaler": 0}},
		{"base", func(*testing.T) string { return "base" },
			map[string]int{"Deployment": 4, "Service": 4, "ServiceAccount": 4, "PodDisruptionBudget": 4, "NetworkPolicy": 4, "ConfigMap": 5}},
	}
	opts := checkOptions()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs, err := Render(tt.dir(t))
			if err != nil {
				t.Fatal(err)
			}
			got := kinds(objs)
			for k, n := range tt.want {
				if got[k] != n {
					t.Errorf("%d %s objects, want %d (all: %v)", got[k], k, n, got)
				}
			}
			vs, err := Check(objs, opts...)
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range vs {
				t.Error(v)
			}
		})
	}
}

// TestProductionWiring pins what the production overlay promises beyond the generic rules.
func TestProductionWiring(t *testing.T) {
	objs, err := Render("overlays/production")
	if err != nil {
		t.Fatal(err)
	}
	g, ok := find(objs, "Deployment", "graphrag-grapher")
	if !ok {
		t.Fatal("no grapher Deployment")
	}
	var grapherDep appsv1.Deployment
	if err := DecodeStrict(g, &grapherDep); err != nil {
		t.Fatal(err)
	}
	if r := grapherDep.Spec.Replicas; r == nil || *r != 2 {
		t.Errorf("grapher replicas = %v, want 2 sharing the shards", r)
	}
	o, ok := find(objs, "ScaledObject", "graphrag-extractor")
	if !ok {
		t.Fatal("no ScaledObject for the extractor")
	}
	var so ScaledObject
	if err := DecodeStrict(o, &so); err != nil {
		t.Fatal(err)
	}
	if tr := so.Spec.Triggers; len(tr) == 0 || tr[0].Type != "nats-jetstream" || tr[0].Metadata["stream"] != "GRAPHRAG_CHUNKS" {
		t.Errorf("extractor triggers = %+v, want nats-jetstream on GRAPHRAG_CHUNKS", tr)
	}
	for _, name := range []string{"graphrag-extractor", "graphrag-summarizer"} {
		d, ok := find(objs, "Deployment", name)
		if !ok {
			t.Fatalf("no Deployment %s", name)
		}
		var m map[string]any
		if err := json.Unmarshal(d.JSON, &m); err != nil {
			t.Fatal(err)
		}
		if _, has := m["spec"].(map[string]any)["replicas"]; has {
			t.Errorf("%s sets replicas although KEDA owns the count", name)
		}
	}
	// Every service reads the common ConfigMap; the graph store is in one of its own,
	// which only the services with a graph store load (the extractor has no such flag).
	wants := map[string][]string{
		"graphrag-common": {"nats.nats.svc.cluster.local:4222", "GRAPHRAG_OTLP_ENDPOINT", "GRAPHRAG_VECTOR_STORE\":\"milvus"},
		"graphrag-graph":  {"GRAPHRAG_GRAPH_STORE\":\"neo4j", "GRAPHRAG_NEO4J_URI"},
	}
	for prefix, want := range wants {
		found := false
		for _, o := range objs {
			if o.Kind != "ConfigMap" || !strings.HasPrefix(o.Name, prefix+"-") {
				continue
			}
			found = true
			for _, w := range want {
				if !strings.Contains(string(o.JSON), w) {
					t.Errorf("ConfigMap %s lacks %s: %s", o.Name, w, o.JSON)
				}
			}
		}
		if !found {
			t.Errorf("no ConfigMap %s", prefix)
		}
	}
	for _, name := range []string{"graphrag-grapher", "graphrag-summarizer", "graphrag-query"} {
		d, ok := find(objs, "Deployment", name)
		if !ok {
			t.Fatalf("no Deployment %s", name)
		}
		if !strings.Contains(string(d.JSON), `"name":"graphrag-graph-`) {
			t.Errorf("%s does not load the graphrag-graph ConfigMap", name)
		}
	}
}

// TestProductionStreamReplicas: production provisions every stream and bucket on as many
// replicas as the NATS chart runs servers, so that losing one server stops nothing (a
// stream on one replica stops with its server, and is lost with its disk).
func TestProductionStreamReplicas(t *testing.T) {
	b, err := os.ReadFile("../helm/nats-values.yaml")
	if err != nil {
		t.Fatal(err)
	}
	node, err := yaml.Parse(string(b))
	if err != nil {
		t.Fatal(err)
	}
	v, err := node.Pipe(yaml.Lookup("config", "cluster", "replicas"))
	if err != nil || v == nil {
		t.Fatalf("nats-values.yaml: config.cluster.replicas missing (%v)", err)
	}
	servers := yaml.GetValue(v)
	for _, overlay := range []string{"overlays/production", "overlays/production-hpa", "overlays/production-keda-prometheus"} {
		objs, err := Render(overlay)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, o := range objs {
			if o.Kind != "ConfigMap" || !strings.HasPrefix(o.Name, "graphrag-common") {
				continue
			}
			var cm corev1.ConfigMap
			if err := DecodeStrict(o, &cm); err != nil {
				t.Fatal(err)
			}
			found = true
			if got := cm.Data["GRAPHRAG_STREAM_REPLICAS"]; got != servers {
				t.Errorf("%s: GRAPHRAG_STREAM_REPLICAS = %q, want %s (the NATS chart's servers)", overlay, got, servers)
			}
		}
		if !found {
			t.Errorf("%s: no graphrag-common ConfigMap", overlay)
		}
	}
}

// mutate renders the production overlay, applies f to the object kind/name (decoded as
// generic JSON) and returns the objects.
func mutate(t *testing.T, objs []Object, kind, name string, f func(m map[string]any)) []Object {
	t.Helper()
	out := slices.Clone(objs)
	for i, o := range out {
		if o.Kind != kind || !strings.HasPrefix(o.Name, name) {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(o.JSON, &m); err != nil {
			t.Fatal(err)
		}
		f(m)
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		out[i].JSON = b
		out[i].Kind, out[i].APIVersion = m["kind"].(string), m["apiVersion"].(string)
		return out
	}
	t.Fatalf("no %s %s", kind, name)
	return nil
}

func obj(m map[string]any, path ...string) map[string]any {
	for _, p := range path {
		m = m[p].(map[string]any)
	}
	return m
}

func container(m map[string]any) map[string]any {
	return obj(m, "spec", "template", "spec")["containers"].([]any)[0].(map[string]any)
}

// TestCheckFindsViolations breaks one promise at a time and expects Check to name it:
// the rules above are only worth something if they can fail.
func TestCheckFindsViolations(t *testing.T) {
	base, err := Render("overlays/production")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, kind, obj, rule string
		f                     func(m map[string]any)
	}{
		{"no liveness probe", "Deployment", "graphrag-query", "liveness-probe",
			func(m map[string]any) { delete(container(m), "livenessProbe") }},
		{"no readiness probe", "Deployment", "graphrag-extractor", "readiness-probe",
			func(m map[string]any) { delete(container(m), "readinessProbe") }},
		{"latest tag", "Deployment", "graphrag-extractor", "image-pinned",
			func(m map[string]any) { container(m)["image"] = "ghcr.io/graphrag/extractor:latest" }},
		{"untagged image", "Deployment", "graphrag-extractor", "image-pinned",
			func(m map[string]any) { container(m)["image"] = "ghcr.io/graphrag/extractor" }},
		{"no memory limit", "Deployment", "graphrag-summarizer", "resources",
			func(m map[string]any) { delete(obj(container(m), "resources", "limits"), "memory") }},
		{"writable root", "Deployment", "graphrag-grapher", "container-security",
			func(m map[string]any) { obj(container(m), "securityContext")["readOnlyRootFilesystem"] = false }},
		{"capabilities kept", "Deployment", "graphrag-grapher", "container-security",
			func(m map[string]any) { delete(obj(container(m), "securityContext"), "capabilities") }},
		{"root allowed", "Deployment", "graphrag-query", "run-as-non-root",
			func(m map[string]any) { delete(obj(m, "spec", "template", "spec", "securityContext"), "runAsNonRoot") }},
		{"no seccomp", "Deployment", "graphrag-query", "seccomp",
			func(m map[string]any) {
				delete(obj(m, "spec", "template", "spec", "securityContext"), "seccompProfile")
			}},
		{"two graphers without shards", "ConfigMap", "graphrag-grapher", "singleton-replicas",
			func(m map[string]any) { delete(obj(m, "data"), "GRAPHRAG_SHARDS") }},
		{"rolling grapher without shards", "ConfigMap", "graphrag-grapher", "singleton-strategy",
			func(m map[string]any) { obj(m, "data")["GRAPHRAG_SHARDS"] = "0" }},
		{"no grapher", "Deployment", "graphrag-grapher", "sharded-replicas",
			func(m map[string]any) { obj(m, "spec")["replicas"] = 0 }},
		{"secret in ConfigMap", "ConfigMap", "graphrag-common", "secret-in-configmap",
			func(m map[string]any) { obj(m, "data")["GRAPHRAG_LLM_API_KEY"] = "sk-live-123" }},
		{"literal secret env", "Deployment", "graphrag-extractor", "secret-env",
			func(m map[string]any) {
				c := container(m)
				c["env"] = append(c["env"].([]any), map[string]any{"name": "GRAPHRAG_NEO4J_PASSWORD", "value": "hunter2"})
			}},
		{"secret shipped", "ServiceAccount", "graphrag-query", "secret-with-data",
			func(m map[string]any) {
				m["apiVersion"], m["kind"] = "v1", "Secret"
				delete(m, "automountServiceAccountToken")
				m["data"] = map[string]any{"password": "aHVudGVyMg=="}
			}},
		{"misspelt flag", "ConfigMap", "graphrag-extractor", "unknown-env",
			func(m map[string]any) { obj(m, "data")["GRAPHRAG_EXTRACT_WORKER"] = "8" }},
		{"PDB selects nothing", "PodDisruptionBudget", "graphrag-grapher", "pdb",
			func(m map[string]any) { obj(m, "spec", "selector", "matchLabels")["app.kubernetes.io/name"] = "other" }},
		{"NetworkPolicy selects all", "NetworkPolicy", "graphrag-summarizer", "network-policy",
			func(m map[string]any) { obj(m, "spec")["podSelector"] = map[string]any{} }},
		{"trigger on wrong stream", "ScaledObject", "graphrag-extractor", "trigger-stream",
			func(m map[string]any) {
				obj(m, "spec")["triggers"].([]any)[0].(map[string]any)["metadata"].(map[string]any)["stream"] = "GRAPHRAG_DOCUMENTS"
			}},
		{"trigger on bad consumer", "ScaledObject", "graphrag-summarizer", "trigger-consumer",
			func(m map[string]any) {
				obj(m, "spec")["triggers"].([]any)[0].(map[string]any)["metadata"].(map[string]any)["consumer"] = "summarizer_docs"
			}},
		{"scale to zero", "ScaledObject", "graphrag-summarizer", "replica-bounds",
			func(m map[string]any) { obj(m, "spec")["minReplicaCount"] = 0 }},
		{"autoscaled grapher", "ScaledObject", "graphrag-summarizer", "scale-target",
			func(m map[string]any) { obj(m, "spec", "scaleTargetRef")["name"] = "graphrag-grapher" }},
		{"monitor without port", "ServiceMonitor", "graphrag", "monitor-port",
			func(m map[string]any) { obj(m, "spec")["endpoints"].([]any)[0].(map[string]any)["port"] = "metrics" }},
		{"service to no port", "Service", "graphrag-query", "service-port",
			func(m map[string]any) { obj(m, "spec")["ports"].([]any)[0].(map[string]any)["targetPort"] = "api" }},
	}
	opts := checkOptions()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vs, err := Check(mutate(t, base, tt.kind, tt.obj, tt.f), opts...)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.ContainsFunc(vs, func(v Violation) bool { return v.Rule == tt.rule }) {
				t.Errorf("no %s violation; got %v", tt.rule, vs)
			}
		})
	}
}

func TestDecodeStrictRejectsUnknownFields(t *testing.T) {
	base, err := Render("overlays/production")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, kind, obj string
		f               func(m map[string]any)
	}{
		{"misplaced container field", "Deployment", "graphrag-query", func(m map[string]any) { container(m)["livenesProbe"] = map[string]any{} }},
		{"unknown spec field", "PodDisruptionBudget", "graphrag-query", func(m map[string]any) { obj(m, "spec")["minAvailible"] = 1 }},
		{"unknown KEDA field", "ScaledObject", "graphrag-extractor", func(m map[string]any) { obj(m, "spec")["maxReplicas"] = 3 }},
		{"unknown kind", "Service", "graphrag-query", func(m map[string]any) { m["kind"] = "Ingress" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs := mutate(t, base, tt.kind, tt.obj, tt.f)
			if tt.name == "unknown kind" {
				for i := range objs {
					if objs[i].Kind == "Service" && objs[i].Name == "graphrag-query" {
						objs[i].Kind = "Ingress"
					}
				}
			}
			if _, err := Check(objs, checkOptions()...); !errors.Is(err, ErrDecode) {
				t.Errorf("Check error = %v, want ErrDecode", err)
			}
		})
	}
}

// TestHelmValues checks the values files for the official charts parse and say what the
// documentation says they say (they are not installed here).
func TestHelmValues(t *testing.T) {
	tests := []struct {
		file string
		want map[string]string // dotted path -> value
	}{
		{"../helm/nats-values.yaml", map[string]string{
			"config.cluster.enabled": "true", "config.cluster.replicas": "3",
			"config.jetstream.enabled": "true", "config.jetstream.fileStore.enabled": "true",
		}},
		{"../helm/neo4j-values.yaml", map[string]string{
			"neo4j.edition": "community", "neo4j.passwordFromSecret": "graphrag-neo4j-auth",
		}},
		{"../helm/milvus-values.yaml", map[string]string{
			"cluster.enabled": "true",
		}},
	}
	for _, tt := range tests {
		t.Run(filepath.Base(tt.file), func(t *testing.T) {
			b, err := os.ReadFile(tt.file)
			if err != nil {
				t.Fatal(err)
			}
			node, err := yaml.Parse(string(b))
			if err != nil {
				t.Fatal(err)
			}
			for p, want := range tt.want {
				v, err := node.Pipe(yaml.Lookup(strings.Split(p, ".")...))
				if err != nil || v == nil {
					t.Errorf("%s: missing (%v)", p, err)
					continue
				}
				if got := yaml.GetValue(v); got != want {
					t.Errorf("%s = %q, want %q", p, got, want)
				}
			}
		})
	}
}

// TestConfigValuesParse feeds every container's configuration (ConfigMaps it loads and its
// literal env) to the flags of the binary it runs, as the process would read them, and
// validates the result: a value of the wrong type ("30" for a duration), an unknown store
// name or a missing companion setting fails here instead of in a crash-looping pod. Values
// from Secrets are stood in for by a placeholder.
func TestConfigValuesParse(t *testing.T) {
	flagSets := serviceFlagSets()
	for _, overlay := range []string{"overlays/dev", "overlays/production", "overlays/production-hpa", "overlays/production-keda-prometheus"} {
		objs, err := Render(overlay)
		if err != nil {
			t.Fatal(err)
		}
		configMaps := map[string]corev1.ConfigMap{}
		var deployments []appsv1.Deployment
		for _, o := range objs {
			switch o.Kind {
			case "ConfigMap":
				var cm corev1.ConfigMap
				if err := DecodeStrict(o, &cm); err != nil {
					t.Fatal(err)
				}
				configMaps[cm.Name] = cm
			case "Deployment":
				var d appsv1.Deployment
				if err := DecodeStrict(o, &d); err != nil {
					t.Fatal(err)
				}
				deployments = append(deployments, d)
			}
		}
		for _, d := range deployments {
			for _, ct := range d.Spec.Template.Spec.Containers {
				t.Run(overlay+"/"+d.Name+"/"+ct.Name, func(t *testing.T) {
					mk, ok := flagSets[imageRepo(ct.Image)]
					if !ok {
						t.Fatalf("no flag set for image %s", ct.Image)
					}
					env := map[string]string{}
					for _, ef := range ct.EnvFrom {
						if ef.ConfigMapRef == nil {
							continue
						}
						for k, v := range configMaps[ef.ConfigMapRef.Name].Data {
							env[ef.Prefix+k] = v
						}
					}
					for _, e := range ct.Env { // env wins over envFrom, as in Kubernetes
						switch {
						case e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil:
							env[e.Name] = "placeholder-from-secret"
						case e.ValueFrom == nil:
							env[e.Name] = e.Value
						}
					}
					fs, common, backend := mk()
					fs.VisitAll(func(f *flag.Flag) {
						v, ok := env[service.EnvVarName(platform.EnvPrefix, f.Name)]
						if !ok {
							return
						}
						if err := fs.Set(f.Name, v); err != nil {
							t.Errorf("-%s %q: %v", f.Name, v, err)
						}
					})
					if err := common.Validate(); err != nil {
						t.Error(err)
					}
					if err := backend.Validate(); err != nil {
						t.Error(err)
					}
					if common.DataDir == "" || !filepath.IsAbs(common.DataDir) {
						t.Errorf("data dir %q: the root filesystem is read-only, it must be an absolute mounted path", common.DataDir)
					}
					if !slices.ContainsFunc(ct.VolumeMounts, func(m corev1.VolumeMount) bool { return m.MountPath == common.DataDir }) {
						t.Errorf("data dir %s is not a mounted volume", common.DataDir)
					}
					// The binaries listen on loopback unless told otherwise: the probes
					// and Services need the address set explicitly.
					if _, ok := env[service.EnvVarName(platform.EnvPrefix, "http-addr")]; !ok {
						t.Errorf("GRAPHRAG_HTTP_ADDR is not set: the default %s is loopback only", service.DefaultHTTPAddr)
					}
					if common.HTTPAddr != ":8080" {
						t.Errorf("http addr %q: probes, Services and ServiceMonitors use port 8080", common.HTTPAddr)
					}
				})
			}
		}
	}
}
