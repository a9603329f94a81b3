package k8s

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// Violation is one broken invariant.
type Violation struct {
	Object string // Kind/namespace/name
	Rule   string // short rule name, stable for tests
	Detail string
}

func (v Violation) String() string { return v.Object + ": " + v.Rule + ": " + v.Detail }

// SecretName matches names of settings that hold secrets (env vars, ConfigMap keys).
var SecretName = regexp.MustCompile(`(?i)KEY|PASSWORD|TOKEN|SECRET|CREDENTIAL|PASSWD`)

// Option configures Check.
type Option interface{ apply(*config) }

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

type queue struct {
	stream, consumer string
}

type config struct {
	knownEnv   map[string]map[string]bool // image repository -> accepted env names
	envPrefix  string
	singletons map[string]bool
	sharded    map[string]string // Deployment -> the variable that gives it shards
	queues     map[string]queue  // scaled Deployment -> the stream and consumer it drains
}

// WithKnownEnv declares the environment variables the binary in imageRepo (an image name
// without tag) reads; every variable with the env prefix that a container of that image
// gets, literally or from a ConfigMap, must be one of them. Typos and flags that do not
// exist are then caught here instead of being silently ignored by the process.
func WithKnownEnv(imageRepo string, names ...string) Option {
	return optionFunc(func(c *config) {
		m := c.knownEnv[imageRepo]
		if m == nil {
			m = map[string]bool{}
			c.knownEnv[imageRepo] = m
		}
		for _, n := range names {
			m[n] = true
		}
	})
}

// WithEnvPrefix sets the prefix of the variables WithKnownEnv governs (default GRAPHRAG_).
func WithEnvPrefix(p string) Option { return optionFunc(func(c *config) { c.envPrefix = p }) }

// WithSingleton names a Deployment that, where rendered, must run exactly one replica with
// the Recreate strategy and never be autoscaled.
func WithSingleton(deployment string) Option {
	return optionFunc(func(c *config) { c.singletons[deployment] = true })
}

// WithSharded names a Deployment that is a singleton (WithSingleton) unless its pods get
// envVar (the grapher's GRAPHRAG_SHARDS), from a ConfigMap or literally, at 1 or more:
// then its replicas share the work by shard, any number of them (at least one) with any
// strategy. It is never autoscaled either way: shards move on a rebalance, which a
// replica count that follows the load would trigger again and again.
func WithSharded(deployment, envVar string) Option {
	return optionFunc(func(c *config) { c.sharded[deployment] = envVar })
}

// WithQueue says that deployment drains stream through the durable consumer named
// consumer (one for every corpus); ScaledObjects of that Deployment must measure exactly that.
func WithQueue(deployment, stream, consumer string) Option {
	return optionFunc(func(c *config) { c.queues[deployment] = queue{stream, consumer} })
}

// set is the decoded output of one rendering.
type set struct {
	deployments     []appsv1.Deployment
	statefulSets    []appsv1.StatefulSet
	services        []corev1.Service
	serviceAccounts map[string]bool // ns/name
	configMaps      map[string]corev1.ConfigMap
	secrets         []corev1.Secret
	pdbs            []policyv1.PodDisruptionBudget
	netpols         []networkingv1.NetworkPolicy
	hpas            []autoscalingv2.HorizontalPodAutoscaler
	scaledObjects   []ScaledObject
	serviceMonitors []ServiceMonitor
}

func decodeAll(objs []Object) (*set, error) {
	s := &set{serviceAccounts: map[string]bool{}, configMaps: map[string]corev1.ConfigMap{}}
	for _, o := range objs {
		var err error
		switch o.APIVersion + " " + o.Kind {
		case "apps/v1 Deployment":
			var v appsv1.Deployment
			err = DecodeStrict(o, &v)
			s.deployments = append(s.deployments, v)
		case "apps/v1 StatefulSet":
			var v appsv1.StatefulSet
			err = DecodeStrict(o, &v)
			s.statefulSets = append(s.statefulSets, v)
		case "v1 Service":
			var v corev1.Service
			err = DecodeStrict(o, &v)
			s.services = append(s.services, v)
		case "v1 ServiceAccount":
			var v corev1.ServiceAccount
			err = DecodeStrict(o, &v)
			s.serviceAccounts[v.Namespace+"/"+v.Name] = true
		case "v1 ConfigMap":
			var v corev1.ConfigMap
			err = DecodeStrict(o, &v)
			s.configMaps[v.Namespace+"/"+v.Name] = v
		case "v1 Secret":
			var v corev1.Secret
			err = DecodeStrict(o, &v)
			s.secrets = append(s.secrets, v)
		case "v1 PersistentVolumeClaim":
			var v corev1.PersistentVolumeClaim
			err = DecodeStrict(o, &v)
		case "policy/v1 PodDisruptionBudget":
			var v policyv1.PodDisruptionBudget
			err = DecodeStrict(o, &v)
			s.pdbs = append(s.pdbs, v)
		case "networking.k8s.io/v1 NetworkPolicy":
			var v networkingv1.NetworkPolicy
			err = DecodeStrict(o, &v)
			s.netpols = append(s.netpols, v)
		case "autoscaling/v2 HorizontalPodAutoscaler":
			var v autoscalingv2.HorizontalPodAutoscaler
			err = DecodeStrict(o, &v)
			s.hpas = append(s.hpas, v)
		case "keda.sh/v1alpha1 ScaledObject":
			var v ScaledObject
			err = DecodeStrict(o, &v)
			s.scaledObjects = append(s.scaledObjects, v)
		case "monitoring.coreos.com/v1 ServiceMonitor":
			var v ServiceMonitor
			err = DecodeStrict(o, &v)
			s.serviceMonitors = append(s.serviceMonitors, v)
		default:
			// Every kind must be understood, or its fields go unchecked.
			return nil, fmt.Errorf("%w: %s: no Go type for %s %s", ErrDecode, o.ID(), o.APIVersion, o.Kind)
		}
		if err != nil {
			return nil, err
		}
	}
	return s, nil
}

// workload is what the checks need of a Deployment or a StatefulSet.
type workload struct {
	kind, namespace, name string
	replicas              *int32
	strategy              string
	template              corev1.PodTemplateSpec
	claims                []string // volumeClaimTemplates of a StatefulSet
}

func (w workload) id() string { return w.kind + "/" + w.namespace + "/" + w.name }

func (s *set) workloads() []workload {
	var out []workload
	for _, d := range s.deployments {
		out = append(out, workload{"Deployment", d.Namespace, d.Name, d.Spec.Replicas, string(d.Spec.Strategy.Type), d.Spec.Template, nil})
	}
	for _, st := range s.statefulSets {
		var claims []string
		for _, c := range st.Spec.VolumeClaimTemplates {
			claims = append(claims, c.Name)
		}
		out = append(out, workload{"StatefulSet", st.Namespace, st.Name, st.Spec.Replicas, string(st.Spec.UpdateStrategy.Type), st.Spec.Template, claims})
	}
	return out
}

// Check decodes objs strictly and returns every broken invariant, sorted. The error is
// for objects that cannot be decoded at all.
func Check(objs []Object, opts ...Option) ([]Violation, error) {
	c := &config{knownEnv: map[string]map[string]bool{}, envPrefix: "GRAPHRAG_", singletons: map[string]bool{}, sharded: map[string]string{}, queues: map[string]queue{}}
	for _, o := range opts {
		o.apply(c)
	}
	s, err := decodeAll(objs)
	if err != nil {
		return nil, err
	}
	var vs []Violation
	add := func(obj, rule, format string, args ...any) {
		vs = append(vs, Violation{obj, rule, fmt.Sprintf(format, args...)})
	}
	ws := s.workloads()
	for _, w := range ws {
		checkWorkload(c, s, w, add)
	}
	for _, key := range sortedKeys(s.configMaps) {
		cm := s.configMaps[key]
		for _, k := range sortedKeys(cm.Data) {
			if SecretName.MatchString(k) && cm.Data[k] != "" {
				add("ConfigMap/"+key, "secret-in-configmap", "key %s has a value: secrets belong in a Secret referenced by name", k)
			}
		}
		for k := range cm.BinaryData {
			if SecretName.MatchString(k) {
				add("ConfigMap/"+key, "secret-in-configmap", "binary key %s", k)
			}
		}
	}
	for _, sec := range s.secrets {
		if len(sec.Data) > 0 || len(sec.StringData) > 0 {
			add("Secret/"+sec.Namespace+"/"+sec.Name, "secret-with-data", "manifests ship no secret values; create Secrets out of band")
		}
	}
	checkAutoscalers(c, s, add)
	checkServices(s, ws, add)
	sort.Slice(vs, func(i, j int) bool {
		if vs[i].Object != vs[j].Object {
			return vs[i].Object < vs[j].Object
		}
		if vs[i].Rule != vs[j].Rule {
			return vs[i].Rule < vs[j].Rule
		}
		return vs[i].Detail < vs[j].Detail
	})
	return vs, nil
}

type addFunc func(obj, rule, format string, args ...any)

func checkWorkload(c *config, s *set, w workload, add addFunc) {
	id := w.id()
	pod := w.template.Spec
	psc := pod.SecurityContext
	if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot {
		add(id, "run-as-non-root", "pod securityContext.runAsNonRoot must be true")
	}
	if psc == nil || psc.SeccompProfile == nil || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		add(id, "seccomp", "pod securityContext.seccompProfile.type must be RuntimeDefault")
	}
	if pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken {
		add(id, "service-account-token", "automountServiceAccountToken must be false (no API access is needed)")
	}
	if pod.ServiceAccountName == "" || !s.serviceAccounts[w.namespace+"/"+pod.ServiceAccountName] {
		add(id, "service-account", "serviceAccountName %q is not a rendered ServiceAccount", pod.ServiceAccountName)
	}
	single := c.singletons[w.name]
	if v, ok := c.sharded[w.name]; ok {
		if n, err := strconv.Atoi(podEnv(s, w, v)); err == nil && n >= 1 {
			if w.replicas != nil && *w.replicas < 1 {
				add(id, "sharded-replicas", "must run at least 1 replica")
			}
		} else {
			single = true
		}
	}
	if single {
		if w.kind != "Deployment" || w.replicas == nil || *w.replicas != 1 {
			add(id, "singleton-replicas", "must run exactly 1 replica")
		}
		if w.kind == "Deployment" && w.strategy != string(appsv1.RecreateDeploymentStrategyType) {
			add(id, "singleton-strategy", "strategy must be Recreate, got %q", w.strategy)
		}
	}
	secretMounts := map[string]string{} // mount path -> volume, for Secret volumes
	volumes := map[string]corev1.Volume{}
	for _, v := range pod.Volumes {
		volumes[v.Name] = v
	}
	for _, name := range w.claims {
		volumes[name] = corev1.Volume{Name: name}
	}
	for _, ct := range slices.Concat(pod.InitContainers, pod.Containers) {
		cid := id + "/" + ct.Name
		checkImage(cid, ct.Image, add)
		checkContainerSecurity(cid, ct.SecurityContext, add)
		checkResources(cid, ct.Resources, add)
		for _, m := range ct.VolumeMounts {
			v, ok := volumes[m.Name]
			if !ok {
				add(cid, "volume-mount", "mount %s names no volume", m.Name)
				continue
			}
			if v.Secret != nil {
				secretMounts[m.MountPath] = v.Name
			}
		}
		checkEnv(c, s, w, cid, ct, secretMounts, add)
	}
	for _, ct := range pod.Containers {
		cid := id + "/" + ct.Name
		if !hasHandler(ct.LivenessProbe) {
			add(cid, "liveness-probe", "missing")
		}
		if !hasHandler(ct.ReadinessProbe) {
			add(cid, "readiness-probe", "missing")
		}
	}
	podLabels := labels.Set(w.template.Labels)
	if !slices.ContainsFunc(s.pdbs, func(p policyv1.PodDisruptionBudget) bool {
		return p.Namespace == w.namespace && selects(p.Spec.Selector, podLabels)
	}) {
		add(id, "pdb", "no PodDisruptionBudget selects its pods")
	}
	if !slices.ContainsFunc(s.netpols, func(n networkingv1.NetworkPolicy) bool {
		return n.Namespace == w.namespace && selects(&n.Spec.PodSelector, podLabels) &&
			slices.Contains(n.Spec.PolicyTypes, networkingv1.PolicyTypeIngress)
	}) {
		add(id, "network-policy", "no NetworkPolicy with Ingress rules selects its pods")
	}
}

// selects reports whether a non-empty selector matches the labels. An empty selector
// would match every pod of the namespace, which is not "covering this workload".
func selects(sel *metav1.LabelSelector, l labels.Set) bool {
	if sel == nil || (len(sel.MatchLabels) == 0 && len(sel.MatchExpressions) == 0) {
		return false
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	return err == nil && s.Matches(l)
}

func hasHandler(p *corev1.Probe) bool {
	if p == nil {
		return false
	}
	h := p.ProbeHandler
	return h.HTTPGet != nil || h.TCPSocket != nil || h.Exec != nil || h.GRPC != nil
}

// checkImage wants a tag other than latest, or a digest.
func checkImage(cid, image string, add addFunc) {
	if strings.Contains(image, "@sha256:") {
		return
	}
	last := path.Base(image)
	_, tag, ok := strings.Cut(last, ":")
	if !ok || tag == "" || tag == "latest" {
		add(cid, "image-pinned", "image %q is not pinned to a tag or digest", image)
	}
}

func checkContainerSecurity(cid string, sc *corev1.SecurityContext, add addFunc) {
	if sc == nil {
		add(cid, "container-security", "no securityContext")
		return
	}
	if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		add(cid, "container-security", "allowPrivilegeEscalation must be false")
	}
	if sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
		add(cid, "container-security", "readOnlyRootFilesystem must be true")
	}
	if sc.Privileged != nil && *sc.Privileged {
		add(cid, "container-security", "privileged")
	}
	if sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") {
		add(cid, "container-security", "capabilities must drop ALL")
	}
	if sc.Capabilities != nil && len(sc.Capabilities.Add) > 0 {
		add(cid, "container-security", "adds capabilities %v", sc.Capabilities.Add)
	}
}

func checkResources(cid string, r corev1.ResourceRequirements, add addFunc) {
	for _, res := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		req, okReq := r.Requests[res]
		lim, okLim := r.Limits[res]
		if !okReq || req.IsZero() {
			add(cid, "resources", "no %s request", res)
		}
		if !okLim || lim.IsZero() {
			add(cid, "resources", "no %s limit", res)
		}
		if okReq && okLim && req.Cmp(lim) > 0 {
			add(cid, "resources", "%s request %s exceeds limit %s", res, req.String(), lim.String())
		}
	}
}

// podEnv is the value the first container of a workload's pods gets for the variable
// name: a literal env entry wins over ConfigMaps in envFrom, of which the last wins, as in
// Kubernetes ("" when none sets it).
func podEnv(s *set, w workload, name string) string {
	if len(w.template.Spec.Containers) == 0 {
		return ""
	}
	ct := w.template.Spec.Containers[0]
	for _, e := range ct.Env {
		if e.Name == name && e.ValueFrom == nil {
			return e.Value
		}
	}
	v := ""
	for _, ef := range ct.EnvFrom {
		if ef.ConfigMapRef == nil {
			continue
		}
		cm := s.configMaps[w.namespace+"/"+ef.ConfigMapRef.Name]
		for k, val := range cm.Data {
			if ef.Prefix+k == name {
				v = val
			}
		}
	}
	return v
}

func checkEnv(c *config, s *set, w workload, cid string, ct corev1.Container, secretMounts map[string]string, add addFunc) {
	var names []string
	for _, ef := range ct.EnvFrom {
		switch {
		case ef.ConfigMapRef != nil:
			cm, ok := s.configMaps[w.namespace+"/"+ef.ConfigMapRef.Name]
			if !ok {
				add(cid, "env-from", "ConfigMap %s is not rendered", ef.ConfigMapRef.Name)
				continue
			}
			for k := range cm.Data {
				names = append(names, ef.Prefix+k)
			}
		case ef.SecretRef != nil:
			// Referenced by name, created out of band: its keys are not known here.
		}
	}
	for _, e := range ct.Env {
		names = append(names, e.Name)
		if !SecretName.MatchString(e.Name) {
			continue
		}
		switch {
		case e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil:
		case e.ValueFrom != nil:
			add(cid, "secret-env", "%s must come from a Secret", e.Name)
		case e.Value == "":
		default:
			// A literal is allowed only as the path of a file in a mounted Secret.
			if !underSecretMount(e.Value, secretMounts) {
				add(cid, "secret-env", "%s has a literal value that is not a file in a mounted Secret", e.Name)
			}
		}
	}
	repo := imageRepo(ct.Image)
	known, ok := c.knownEnv[repo]
	if !ok {
		return
	}
	sort.Strings(names)
	for _, n := range slices.Compact(names) {
		if strings.HasPrefix(n, c.envPrefix) && !known[n] {
			add(cid, "unknown-env", "%s is not a setting of %s", n, repo)
		}
	}
}

func underSecretMount(p string, mounts map[string]string) bool {
	if !strings.HasPrefix(p, "/") {
		return false
	}
	clean := path.Clean(p)
	for m := range mounts {
		if strings.HasPrefix(clean, path.Clean(m)+"/") {
			return true
		}
	}
	return false
}

// imageRepo strips the tag or digest from an image reference.
func imageRepo(image string) string {
	if i := strings.Index(image, "@"); i >= 0 {
		image = image[:i]
	}
	// The tag starts at the first colon of the last path element (a registry port sits
	// before a slash; a tag never contains a colon).
	slash := strings.LastIndex(image, "/")
	if i := strings.Index(image[slash+1:], ":"); i >= 0 {
		image = image[:slash+1+i]
	}
	return image
}

func checkAutoscalers(c *config, s *set, add addFunc) {
	deployments := map[string]bool{}
	for _, d := range s.deployments {
		deployments[d.Namespace+"/"+d.Name] = true
	}
	scaled := map[string]string{}
	claim := func(obj, ns, target string) {
		key := ns + "/" + target
		if !deployments[key] {
			add(obj, "scale-target", "targets %s, which is not a rendered Deployment", target)
		}
		if _, sharded := c.sharded[target]; c.singletons[target] || sharded {
			add(obj, "scale-target", "autoscales the single-instance %s", target)
		}
		if prev, dup := scaled[key]; dup {
			add(obj, "scale-target", "%s is also scaled by %s", target, prev)
		}
		scaled[key] = obj
	}
	for _, h := range s.hpas {
		id := "HorizontalPodAutoscaler/" + h.Namespace + "/" + h.Name
		if h.Spec.ScaleTargetRef.Kind != "Deployment" {
			add(id, "scale-target", "kind %s", h.Spec.ScaleTargetRef.Kind)
		}
		claim(id, h.Namespace, h.Spec.ScaleTargetRef.Name)
		if h.Spec.MinReplicas == nil || *h.Spec.MinReplicas < 1 || h.Spec.MaxReplicas < *h.Spec.MinReplicas {
			add(id, "replica-bounds", "need 1 <= minReplicas <= maxReplicas")
		}
		if len(h.Spec.Metrics) == 0 {
			add(id, "hpa-metrics", "no metrics")
		}
	}
	for _, so := range s.scaledObjects {
		id := "ScaledObject/" + so.Namespace + "/" + so.Name
		ref := so.Spec.ScaleTargetRef
		if ref.Kind != "" && ref.Kind != "Deployment" {
			add(id, "scale-target", "kind %s", ref.Kind)
		}
		claim(id, so.Namespace, ref.Name)
		mn, mx := so.Spec.MinReplicaCount, so.Spec.MaxReplicaCount
		// At least one replica: documents are chunked as they arrive.
		if mn == nil || *mn < 1 || mx == nil || *mx < *mn {
			add(id, "replica-bounds", "need 1 <= minReplicaCount <= maxReplicaCount")
		}
		if len(so.Spec.Triggers) == 0 {
			add(id, "triggers", "no triggers")
		}
		q, hasQueue := c.queues[ref.Name]
		for i, t := range so.Spec.Triggers {
			tid := fmt.Sprintf("%s/trigger[%d]", id, i)
			switch t.Type {
			case "nats-jetstream":
				for _, k := range []string{"natsServerMonitoringEndpoint", "account", "stream", "consumer", "lagThreshold"} {
					if t.Metadata[k] == "" {
						add(tid, "trigger-metadata", "missing %s", k)
					}
				}
				checkPositive(tid, "lagThreshold", t.Metadata["lagThreshold"], add)
				checkKnownKeys(tid, t.Metadata, add, "natsServerMonitoringEndpoint", "account", "stream", "consumer",
					"lagThreshold", "activationLagThreshold", "useHttps")
				if hasQueue {
					if t.Metadata["stream"] != q.stream {
						add(tid, "trigger-stream", "stream %q, %s drains %s", t.Metadata["stream"], ref.Name, q.stream)
					}
					if t.Metadata["consumer"] != q.consumer {
						add(tid, "trigger-consumer", "consumer %q, %s drains %s", t.Metadata["consumer"], ref.Name, q.consumer)
					}
				}
			case "prometheus":
				for _, k := range []string{"serverAddress", "query", "threshold"} {
					if t.Metadata[k] == "" {
						add(tid, "trigger-metadata", "missing %s", k)
					}
				}
				checkPositive(tid, "threshold", t.Metadata["threshold"], add)
				if hasQueue && !strings.Contains(t.Metadata["query"], `"`+q.stream+`"`) {
					add(tid, "trigger-stream", "query does not select stream %s", q.stream)
				}
			default:
				add(tid, "trigger-type", "type %q: only nats-jetstream and prometheus are expected", t.Type)
			}
		}
	}
}

func checkPositive(tid, key, v string, add addFunc) {
	if v == "" {
		return
	}
	if n, err := strconv.ParseFloat(v, 64); err != nil || n <= 0 {
		add(tid, "trigger-metadata", "%s %q is not a positive number", key, v)
	}
}

func checkKnownKeys(tid string, md map[string]string, add addFunc, known ...string) {
	for _, k := range sortedKeys(md) {
		if !slices.Contains(known, k) {
			add(tid, "trigger-metadata", "unknown key %s", k)
		}
	}
}

func checkServices(s *set, ws []workload, add addFunc) {
	for _, svc := range s.services {
		id := "Service/" + svc.Namespace + "/" + svc.Name
		var pods []workload
		for _, w := range ws {
			if w.namespace == svc.Namespace && len(svc.Spec.Selector) > 0 &&
				labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(w.template.Labels)) {
				pods = append(pods, w)
			}
		}
		if len(pods) == 0 {
			add(id, "service-selector", "selects no workload")
			continue
		}
		for _, p := range svc.Spec.Ports {
			if p.TargetPort.StrVal == "" {
				continue
			}
			for _, w := range pods {
				if !slices.ContainsFunc(w.template.Spec.Containers, func(c corev1.Container) bool {
					return slices.ContainsFunc(c.Ports, func(cp corev1.ContainerPort) bool { return cp.Name == p.TargetPort.StrVal })
				}) {
					add(id, "service-port", "targetPort %s is not a container port of %s", p.TargetPort.StrVal, w.id())
				}
			}
		}
	}
	for _, sm := range s.serviceMonitors {
		id := "ServiceMonitor/" + sm.Namespace + "/" + sm.Name
		sel, err := metav1.LabelSelectorAsSelector(&sm.Spec.Selector)
		if err != nil {
			add(id, "monitor-selector", "%v", err)
			continue
		}
		n := 0
		for _, svc := range s.services {
			if svc.Namespace == sm.Namespace && sel.Matches(labels.Set(svc.Labels)) {
				n++
				for _, ep := range sm.Spec.Endpoints {
					if !slices.ContainsFunc(svc.Spec.Ports, func(p corev1.ServicePort) bool { return p.Name == ep.Port }) {
						add(id, "monitor-port", "Service %s has no port %s", svc.Name, ep.Port)
					}
				}
			}
		}
		if n == 0 {
			add(id, "monitor-selector", "selects no Service")
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
