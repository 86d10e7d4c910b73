{{/* Chart name, or nameOverride. */}}
{{- define "tokengap.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Resource name: <release>-tokengap, or <release> when it already contains the chart name. */}}
{{- define "tokengap.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* Labels that select this release's pods. */}}
{{- define "tokengap.selectorLabels" -}}
app.kubernetes.io/name: {{ include "tokengap.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* Labels of every resource. */}}
{{- define "tokengap.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "tokengap.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: tokengap
tokengap.dev/mode: {{ include "tokengap.mode" . }}
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* The deployment mode, validated (values.schema.json checks it first; this guards the templates). */}}
{{- define "tokengap.mode" -}}
{{- if not (has .Values.mode (list "sidecar" "standalone" "monitoring")) }}
{{- fail (printf "mode must be sidecar, standalone or monitoring, not %q" (toString .Values.mode)) }}
{{- end }}
{{- .Values.mode }}
{{- end }}

{{/* "true" when the chart runs tokengap itself (sidecar or standalone), "" in monitoring mode. */}}
{{- define "tokengap.ownsPods" -}}
{{- if ne (include "tokengap.mode" .) "monitoring" }}true{{ end }}
{{- end }}

{{/*
Processors the JVM sizes itself for: tokengap.jvm.activeProcessorCount, else the CPU request
rounded up ("250m" -> 1, "1.5" -> 2, 4 -> 4), else 2; never below 2. With no CPU limit the JVM
would otherwise count every CPU of the node (100-200 on a GPU node) and size GC threads, the
common pool and Reactor Netty's event loops for them.
*/}}
{{- define "tokengap.processors" -}}
{{- $explicit := toString (default "" .Values.tokengap.jvm.activeProcessorCount) }}
{{- $n := 2 }}
{{- if ne $explicit "" }}
{{- if not (regexMatch "^[1-9][0-9]*$" $explicit) }}
{{- fail (printf "tokengap.jvm.activeProcessorCount must be a whole number of processors, not %q" $explicit) }}
{{- end }}
{{- $n = int $explicit }}
{{- else }}
{{- $cpu := toString (dig "requests" "cpu" "" (default dict .Values.tokengap.resources)) }}
{{- if ne $cpu "" }}
{{- if regexMatch "^[0-9]+m$" $cpu }}
{{- $n = div (add (int (trimSuffix "m" $cpu)) 999) 1000 | int }}
{{- else if regexMatch "^[0-9]+([.][0-9]+)?$" $cpu }}
{{- $n = ceil (float64 $cpu) | int }}
{{- else }}
{{- fail (printf "tokengap.resources.requests.cpu must be cores (2, 1.5) or millicores (500m) to size the JVM, not %q; or set tokengap.jvm.activeProcessorCount" $cpu) }}
{{- end }}
{{- $n = max $n 2 | int }}
{{- end }}
{{- end }}
{{- $n }}
{{- end }}

{{/* Reactor Netty's event loops: tokengap.jvm.ioWorkerCount, else one per processor. */}}
{{- define "tokengap.ioWorkers" -}}
{{- $explicit := toString (default "" .Values.tokengap.jvm.ioWorkerCount) }}
{{- if ne $explicit "" }}
{{- if not (regexMatch "^[1-9][0-9]*$" $explicit) }}
{{- fail (printf "tokengap.jvm.ioWorkerCount must be a whole number of event loops, not %q" $explicit) }}
{{- end }}
{{- $explicit }}
{{- else }}
{{- include "tokengap.processors" . }}
{{- end }}
{{- end }}

{{/* JAVA_TOOL_OPTIONS: the pod-sized processor flags, then javaToolOptions (a flag there wins). */}}
{{- define "tokengap.javaToolOptions" -}}
{{- printf "-XX:ActiveProcessorCount=%s -Dreactor.netty.ioWorkerCount=%s %s" (include "tokengap.processors" .) (include "tokengap.ioWorkers" .) .Values.tokengap.javaToolOptions | trim }}
{{- end }}

{{/* The engine tokengap proxies to (sidecar and standalone modes). */}}
{{- define "tokengap.upstreamUrl" -}}
{{- if eq (include "tokengap.mode" .) "sidecar" }}
{{- printf "http://127.0.0.1:%d" (int .Values.vllm.port) }}
{{- else }}
{{- required "standalone mode needs upstream.url, the vLLM Service to proxy to (e.g. http://vllm.inference.svc:8000)" .Values.upstream.url }}
{{- end }}
{{- end }}

{{/* Pod grace period: tokengap's preStop pause + its drain + a margin for the JVM to exit. */}}
{{- define "tokengap.terminationGracePeriodSeconds" -}}
{{- if lt (int .Values.terminationGraceMarginSeconds) 1 }}
{{- fail "terminationGraceMarginSeconds must be at least 1: the JVM needs time to exit after the drain" }}
{{- end }}
{{- add (int .Values.preStopSleepSeconds) (int .Values.drainTimeout) (int .Values.terminationGraceMarginSeconds) }}
{{- end }}

{{- define "tokengap.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "tokengap.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "tokengap.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{/*
An endpoint's scrape settings, shared by the ServiceMonitor and the PodMonitor: interval,
timeout, honorLabels, the fixed job label (the alert rules select job="tokengap" and
job="vllm"), then the monitor's own relabelings (which may rewrite it) and metricRelabelings.
*/}}
{{- define "tokengap.scrapeSettings" -}}
interval: {{ .monitor.interval }}
scrapeTimeout: {{ .monitor.scrapeTimeout }}
{{- if .monitor.honorLabels }}
honorLabels: true
{{- end }}
relabelings:
  - action: replace
    targetLabel: job
    replacement: {{ .job }}
  {{- with .monitor.relabelings }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
{{- with .monitor.metricRelabelings }}
metricRelabelings:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}

{{/* A PodMonitor endpoint's port: a container port name, or a number (targetPort, which every
Prometheus Operator version accepts; portNumber needs v0.80 or later). */}}
{{- define "tokengap.podPort" -}}
{{- if kindIs "string" . -}}
port: {{ . | quote }}
{{- else -}}
targetPort: {{ int . }}
{{- end }}
{{- end }}
