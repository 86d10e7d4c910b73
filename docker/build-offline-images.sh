#!/usr/bin/env bash
# Builds local stand-ins for the upstream images our Dockerfile and container tests use, on a
# machine that reaches no image registry (see shared/design/offline-images.md):
#
#   eclipse-temurin:25-jre    a jlink'ed Temurin 25 runtime (from the host's JDK), the shared
#                             libraries it needs and a static busybox for /bin/sh, laid out like
#                             upstream's image (JAVA_HOME=/opt/java/openjdk);
#   prom/prometheus:v2.42.0   Debian's prometheus 2.42 binary laid out like upstream's image
#                             (ENTRYPOINT /bin/prometheus, USER nobody, WORKDIR /prometheus).
#
# Each image is labelled with a hash of what it was built from and is rebuilt only when that hash
# changes, so a second run takes a second. An image of that name that does not carry our label
# (the real upstream image, pulled on a machine with a registry) is left alone.
#
# Usage: docker/build-offline-images.sh [--force]
# Needs: a Docker engine that answers (docker/ensure-docker-engine.sh), root for apt-get when
# busybox-static or prometheus are missing, and Temurin's JDK 25 (TEMURIN_JDK, default below).
set -euo pipefail

force=false
[[ "${1:-}" == "--force" ]] && force=true

jdk="${TEMURIN_JDK:-/usr/lib/jvm/temurin-25-jdk-amd64}"
label=dev.tokengap.offline-inputs
self_hash="$(sha256sum "$0" | cut -c1-64)"
work="$(mktemp -d)"
trap 'rm -rf "${work}"' EXIT

log() { echo "offline-images: $*"; }

# The modules of upstream's JRE image: java.se and the JDK's runtime (non-development) modules.
jre_modules="java.se,jdk.accessibility,jdk.attach,jdk.charsets,jdk.crypto.cryptoki,jdk.crypto.ec,\
jdk.dynalink,jdk.httpserver,jdk.internal.jvmstat,jdk.jcmd,jdk.jdwp.agent,\
jdk.jfr,jdk.jsobject,jdk.localedata,jdk.management,jdk.management.agent,jdk.management.jfr,\
jdk.naming.dns,jdk.naming.rmi,jdk.net,jdk.nio.mapmode,jdk.sctp,jdk.security.auth,\
jdk.security.jgss,jdk.unsupported,jdk.unsupported.desktop,jdk.xml.dom,jdk.zipfs"

ensure_packages() {
  local missing=() package
  for package in busybox-static prometheus; do
    dpkg-query -W -f '${Status}' "${package}" 2>/dev/null | grep -q 'install ok installed' \
      || missing+=("${package}")
  done
  if (( ${#missing[@]} > 0 )); then
    log "installing Debian's ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
}

# Returns 0 when the image must be (re)built: missing, or ours with another input hash.
needs_build() {
  local image="$1" hash="$2" current
  if ! docker image inspect "${image}" >/dev/null 2>&1; then
    return 0
  fi
  current="$(docker image inspect -f "{{ index .Config.Labels \"${label}\" }}" "${image}" 2>/dev/null || true)"
  if [[ -z "${current}" || "${current}" == "<no value>" ]]; then
    log "${image} exists and is not ours (upstream image?): keeping it"
    return 1
  fi
  if [[ "${current}" == "${hash}" ]] && ! ${force}; then
    log "${image} is up to date (${hash:0:12})"
    return 1
  fi
  return 0
}

# Copies the shared libraries the given ELF files need (as ldd resolves them) into the root.
copy_libraries() {
  local root="$1"; shift
  local lib
  # "libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x...)" and "/lib64/ld-linux-x86-64.so.2 (0x...)";
  # the runtime's own libraries (found through its RPATH) are already in the root.
  for lib in $(ldd "$@" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// && $2 ~ /^\(/ {print $1}' \
      | grep -v "^${root}" | sort -u); do
    cp -L --parents "${lib}" "${root}"
  done
}

add_busybox() {
  local root="$1" applet
  mkdir -p "${root}/bin" "${root}/usr/bin"
  cp /bin/busybox "${root}/bin/busybox"
  for applet in $(/bin/busybox --list); do
    [[ "${applet}" == busybox ]] || ln -sf busybox "${root}/bin/${applet}"
  done
  ln -sf /bin/busybox "${root}/usr/bin/env"
}

base_files() {
  local root="$1"
  mkdir -p "${root}/etc" "${root}/tmp" "${root}/root" "${root}/etc/ssl/certs"
  chmod 1777 "${root}/tmp"
  printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' \
    >"${root}/etc/passwd"
  printf 'root:x:0:\nnogroup:x:65534:\n' >"${root}/etc/group"
  printf 'passwd: files\ngroup: files\nhosts: files dns\n' >"${root}/etc/nsswitch.conf"
  [[ -f /etc/ssl/certs/ca-certificates.crt ]] \
    && cp /etc/ssl/certs/ca-certificates.crt "${root}/etc/ssl/certs/"
  return 0
}

import_image() {
  local root="$1" image="$2" hash="$3"; shift 3
  local changes=(-c "LABEL ${label}=${hash}" -c "LABEL dev.tokengap.offline-stand-in=${image}")
  local change
  for change in "$@"; do changes+=(-c "${change}"); done
  tar -C "${root}" --owner=0 --group=0 --numeric-owner -cf - . \
    | docker import "${changes[@]}" - "${image}" >/dev/null
  log "built ${image} ($(docker image inspect -f '{{.Size}}' "${image}" | awk '{printf "%d MB", $1/1000000}')), inputs ${hash:0:12}"
}

build_temurin() {
  local image=eclipse-temurin:25-jre
  if [[ ! -x "${jdk}/bin/jlink" ]]; then
    if docker image inspect "${image}" >/dev/null 2>&1; then
      log "no JDK at ${jdk}; keeping the existing ${image}"
      return 0
    fi
    log "no JDK at ${jdk} (set TEMURIN_JDK) and no ${image} image: trying docker pull"
    docker pull "${image}"
    return 0
  fi
  local hash
  hash="$( (echo "${self_hash}"; cat "${jdk}/release"; dpkg-query -W busybox-static) | sha256sum | cut -c1-64)"
  needs_build "${image}" "${hash}" || return 0
  log "building ${image} from ${jdk} (jlink, ~20 s)"
  local root="${work}/temurin"
  mkdir -p "${root}/opt/java"
  "${jdk}/bin/jlink" --add-modules "${jre_modules}" --strip-debug --no-man-pages --no-header-files --generate-cds-archive \
    --output "${root}/opt/java/openjdk" 2>&1 | grep -v '^$' || true
  [[ -x "${root}/opt/java/openjdk/bin/java" ]] || { log "jlink failed"; return 1; }
  base_files "${root}"
  add_busybox "${root}"
  local elves
  elves="$(find "${root}/opt/java/openjdk" -type f \( -name '*.so' -o -path '*/bin/*' \))"
  # shellcheck disable=SC2086
  copy_libraries "${root}" ${elves}
  # glibc loads libgcc_s at run time (thread cancellation, unwinding) without ldd seeing it.
  cp -L --parents /lib/x86_64-linux-gnu/libgcc_s.so.1 "${root}"
  import_image "${root}" "${image}" "${hash}" \
    'ENV JAVA_HOME=/opt/java/openjdk' \
    'ENV PATH=/opt/java/openjdk/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    'ENV LANG=en_US.UTF-8' \
    'CMD ["java", "-version"]'
}

build_prometheus() {
  local image=prom/prometheus:v2.42.0
  local hash
  hash="$( (echo "${self_hash}"; dpkg-query -W prometheus; sha256sum /usr/bin/prometheus /usr/bin/promtool) \
    | sha256sum | cut -c1-64)"
  needs_build "${image}" "${hash}" || return 0
  log "building ${image} from Debian's $(dpkg-query -W -f '${Package} ${Version}' prometheus)"
  local root="${work}/prometheus"
  base_files "${root}"
  add_busybox "${root}"
  cp /usr/bin/prometheus /usr/bin/promtool "${root}/bin/"
  copy_libraries "${root}" /usr/bin/prometheus /usr/bin/promtool
  mkdir -p "${root}/etc/prometheus" "${root}/usr/share/prometheus" "${root}/prometheus"
  cp -r /etc/prometheus/console_libraries /etc/prometheus/consoles "${root}/usr/share/prometheus/"
  ln -s /usr/share/prometheus/console_libraries "${root}/etc/prometheus/console_libraries"
  ln -s /usr/share/prometheus/consoles "${root}/etc/prometheus/consoles"
  [[ -d /usr/share/prometheus/web ]] && cp -r /usr/share/prometheus/web "${root}/usr/share/prometheus/"
  cat >"${root}/etc/prometheus/prometheus.yml" <<'YAML'
global:
  scrape_interval: 15s
scrape_configs:
  - job_name: prometheus
    static_configs:
      - targets: ["localhost:9090"]
YAML
  chown -R 65534:65534 "${root}/prometheus" "${root}/etc/prometheus/prometheus.yml"
  # tar --owner=0 would hand /prometheus to root: keep nobody's ownership for that directory.
  tar -C "${root}" --numeric-owner -cf - . \
    | docker import \
      -c "LABEL ${label}=${hash}" -c "LABEL dev.tokengap.offline-stand-in=${image}" \
      -c 'USER nobody' -c 'WORKDIR /prometheus' -c 'EXPOSE 9090' -c 'VOLUME ["/prometheus"]' \
      -c 'ENTRYPOINT ["/bin/prometheus"]' \
      -c 'CMD ["--config.file=/etc/prometheus/prometheus.yml", "--storage.tsdb.path=/prometheus", "--web.console.libraries=/usr/share/prometheus/console_libraries", "--web.console.templates=/usr/share/prometheus/consoles"]' \
      - "${image}" >/dev/null
  log "built ${image} ($(docker image inspect -f '{{.Size}}' "${image}" | awk '{printf "%d MB", $1/1000000}')), inputs ${hash:0:12}"
}

docker version >/dev/null 2>&1 || { log "no Docker engine answers (run docker/ensure-docker-engine.sh)"; exit 1; }
ensure_packages
start=${SECONDS}
build_temurin
build_prometheus
log "done in $((SECONDS - start)) s"
