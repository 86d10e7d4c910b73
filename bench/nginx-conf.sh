# Sourced by the bench scripts: the nginx every benchmark puts beside tokengap.
#
#   nginx_conf DIR PORT UPSTREAM_PORT [MAIN-CONTEXT-LINES]   prints nginx.conf for DIR/nginx.conf
#
# worker_processes auto (one per core), proxy_buffering off, HTTP/1.1 keep-alive to the upstream
# with a 1,024-connection pool, no access log; pid, error log and temp paths under DIR.
nginx_conf() {
  local dir=$1 port=$2 upstream=$3 extra=${4:-}
  cat <<NGINX
worker_processes auto;
worker_rlimit_nofile 16384;
pid $dir/nginx.pid;
error_log $dir/error.log warn;
daemon off;
$extra
events { worker_connections 8192; }
http {
  access_log off;
  client_body_temp_path $dir/body;
  proxy_temp_path $dir/proxy;
  fastcgi_temp_path $dir/fastcgi;
  uwsgi_temp_path $dir/uwsgi;
  scgi_temp_path $dir/scgi;
  upstream backend { server 127.0.0.1:$upstream; keepalive 1024; }
  server {
    listen 127.0.0.1:$port;
    location / {
      proxy_pass http://backend;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_buffering off;
      proxy_cache off;
      proxy_read_timeout 300s;
    }
  }
}
NGINX
}
