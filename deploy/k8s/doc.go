// Package k8s renders the Kubernetes manifests under this directory (a kustomize base,
// components and overlays) with the kustomize API in-process, decodes every object strictly
// into the Kubernetes API types, and checks the invariants the deployment promises: probes,
// resource requests and limits, a locked-down security context, pinned images, no secret
// values in ConfigMaps or literal env, one grapher unless it is sharded, every workload covered by a
// PodDisruptionBudget and a NetworkPolicy, and well-formed KEDA ScaledObjects.
//
// The directory's layout and the reasons behind it are in docs/operations.md and
// docs/adr/0013-kubernetes.md. Nothing here is needed at run time: it exists so that
// `go test ./...` in this module fails when a manifest drifts from those promises.
package k8s
