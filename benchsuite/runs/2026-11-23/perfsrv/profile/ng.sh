# start_nginx PORT DIR -> prints pid
PORT=$1; D=$2; mkdir -p $D
sed -e "s#@PREFIX@#$D#g" -e "s#@PORT@#$PORT#g" $(dirname "$0")/../../../../http/nginx.conf.in > $D/nginx.conf
