{{/* Chart name, truncated to a DNS label. */}}
{{- define "benchrun.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Fully qualified release name: the release name when it already contains the chart name. */}}
{{- define "benchrun.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* The ClusterRole the operator binds to the redis-role sidecars (files/redis-role.yaml). */}}
{{- define "benchrun.redisRoleName" -}}
{{- printf "%s-redis-role" (include "benchrun.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "benchrun.selectorLabels" -}}
app.kubernetes.io/name: {{ include "benchrun.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: manager
{{- end -}}

{{- define "benchrun.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{ include "benchrun.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "benchrun.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (printf "%s-manager" (include "benchrun.fullname" .)) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/*
An image reference from {repository, tag}: the tag defaults to the chart's appVersion.
Usage: include "benchrun.image" (list $ .Values.images.runner)
*/}}
{{- define "benchrun.image" -}}
{{- $root := index . 0 -}}
{{- $img := index . 1 | default dict -}}
{{- printf "%s:%s" $img.repository (toString ($img.tag | default $root.Chart.AppVersion)) -}}
{{- end -}}

{{/* The restricted, read-only container settings of the helm test pod's kubectl containers. */}}
{{- define "benchrun.testContainer" -}}
env:
- {name: HOME, value: /tmp}
securityContext:
  allowPrivilegeEscalation: false
  readOnlyRootFilesystem: true
  runAsNonRoot: true
  capabilities: {drop: ["ALL"]}
  seccompProfile: {type: RuntimeDefault}
resources:
  requests: {cpu: 10m, memory: 32Mi}
  limits: {memory: 128Mi}
volumeMounts:
- {name: tmp, mountPath: /tmp}
{{- end -}}

{{/* The namespaces the manager watches (--watch-namespaces), comma-separated: watchNamespaces,
else the release namespace when rbac.namespaced, else none (all namespaces). */}}
{{- define "benchrun.watchNamespaces" -}}
{{- if .Values.watchNamespaces -}}
{{- join "," .Values.watchNamespaces -}}
{{- else if .Values.rbac.namespaced -}}
{{- .Release.Namespace -}}
{{- end -}}
{{- end -}}

{{/*
"true" when a ServiceMonitor is rendered: metrics and metrics.serviceMonitor enabled and the
cluster serves the Prometheus Operator's monitoring.coreos.com/v1 ServiceMonitor.
*/}}
{{- define "benchrun.serviceMonitor" -}}
{{- if and .Values.metrics.enabled .Values.metrics.serviceMonitor.enabled (.Capabilities.APIVersions.Has "monitoring.coreos.com/v1/ServiceMonitor") -}}
true
{{- end -}}
{{- end }}
