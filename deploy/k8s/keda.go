package k8s

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ScaledObject mirrors the part of KEDA's keda.sh/v1alpha1 ScaledObject that these
// manifests use; DecodeStrict rejects any other field, so a field KEDA does not know (or
// that this mirror was not taught) fails the test instead of being silently ignored.
// The KEDA API module is not imported: it drags in the whole controller runtime.
type ScaledObject struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              ScaledObjectSpec `json:"spec"`
}

// ScaledObjectSpec is the spec of a ScaledObject.
type ScaledObjectSpec struct {
	ScaleTargetRef   ScaleTarget     `json:"scaleTargetRef"`
	PollingInterval  *int32          `json:"pollingInterval,omitempty"`
	CooldownPeriod   *int32          `json:"cooldownPeriod,omitempty"`
	IdleReplicaCount *int32          `json:"idleReplicaCount,omitempty"`
	MinReplicaCount  *int32          `json:"minReplicaCount,omitempty"`
	MaxReplicaCount  *int32          `json:"maxReplicaCount,omitempty"`
	Advanced         *AdvancedConfig `json:"advanced,omitempty"`
	Triggers         []ScaleTrigger  `json:"triggers"`
	Fallback         *Fallback       `json:"fallback,omitempty"`
}

// ScaleTarget names the scaled workload (a Deployment when Kind is empty).
type ScaleTarget struct {
	Name       string `json:"name"`
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind,omitempty"`
}

// AdvancedConfig tunes the HPA KEDA creates.
type AdvancedConfig struct {
	HorizontalPodAutoscalerConfig *HPAConfig `json:"horizontalPodAutoscalerConfig,omitempty"`
	RestoreToOriginalReplicaCount bool       `json:"restoreToOriginalReplicaCount,omitempty"`
}

// HPAConfig is the HPA part of AdvancedConfig.
type HPAConfig struct {
	Name     string       `json:"name,omitempty"`
	Behavior *HPABehavior `json:"behavior,omitempty"`
}

// HPABehavior mirrors autoscaling/v2 behavior as far as these manifests use it.
type HPABehavior struct {
	ScaleUp   *HPAScalingRules `json:"scaleUp,omitempty"`
	ScaleDown *HPAScalingRules `json:"scaleDown,omitempty"`
}

// HPAScalingRules mirrors autoscaling/v2 HPAScalingRules (policies omitted).
type HPAScalingRules struct {
	StabilizationWindowSeconds *int32 `json:"stabilizationWindowSeconds,omitempty"`
}

// ScaleTrigger is one KEDA trigger; Metadata is scaler-specific and all strings.
type ScaleTrigger struct {
	Type              string            `json:"type"`
	Name              string            `json:"name,omitempty"`
	MetricType        string            `json:"metricType,omitempty"`
	Metadata          map[string]string `json:"metadata"`
	AuthenticationRef *struct {
		Name string `json:"name"`
		Kind string `json:"kind,omitempty"`
	} `json:"authenticationRef,omitempty"`
}

// Fallback is the replica count KEDA keeps when a scaler keeps failing.
type Fallback struct {
	FailureThreshold int32 `json:"failureThreshold"`
	Replicas         int32 `json:"replicas"`
}

// ServiceMonitor mirrors the part of the Prometheus Operator's monitoring.coreos.com/v1
// ServiceMonitor these manifests use.
type ServiceMonitor struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		Selector          metav1.LabelSelector `json:"selector"`
		NamespaceSelector *struct {
			MatchNames []string `json:"matchNames,omitempty"`
			Any        bool     `json:"any,omitempty"`
		} `json:"namespaceSelector,omitempty"`
		Endpoints []struct {
			Port          string `json:"port"`
			Path          string `json:"path,omitempty"`
			Interval      string `json:"interval,omitempty"`
			ScrapeTimeout string `json:"scrapeTimeout,omitempty"`
		} `json:"endpoints"`
	} `json:"spec"`
}
