#!/usr/bin/env bash
# Collects the shard results of a wirebench Job from its pods' logs (each pod prints
# its result on one line after "WIREBENCH-RESULT "), then merges them exactly.
#   deploy/k8s/collect.sh JOB [DIR]     (DIR defaults to ./JOB)
# kubectl's current context and namespace are used; KUBECTL="kubectl -n NS" picks
# another namespace, WIREBENCH another binary. Writes DIR/shard-INDEX.json per pod
# and DIR/merged.json.
set -euo pipefail
job=${1:?usage: collect.sh JOB [DIR]}
dir=${2:-$job}
kubectl=${KUBECTL:-kubectl}
mkdir -p "$dir"

# One line per pod: its completion index (the shard) and its name.
pods=$($kubectl get pods -l "job-name=$job" -o \
    jsonpath='{range .items[*]}{.metadata.annotations.batch\.kubernetes\.io/job-completion-index}{" "}{.metadata.name}{"\n"}{end}')
if [ -z "$pods" ]; then
    echo "collect.sh: no pods of job $job (is it in kubectl's current namespace?)" >&2
    exit 2
fi
while read -r index pod; do
    [ -n "$pod" ] || continue
    out="$dir/shard-$index.json"
    $kubectl logs "$pod" | sed -n 's/^WIREBENCH-RESULT //p' | tail -n 1 > "$out"
    if [ ! -s "$out" ]; then
        echo "collect.sh: pod $pod (shard $index) printed no result; see: $kubectl logs $pod" >&2
        rm -f "$out"
    fi
done <<< "$pods"
# merge refuses a missing shard with one sentence naming it; MERGE_ARGS=--allow-partial
# merges the others and says so in the result.
# shellcheck disable=SC2086 # MERGE_ARGS holds flags, split on purpose
${WIREBENCH:-wirebench} merge "$dir"/shard-*.json -o "$dir/merged.json" ${MERGE_ARGS:-}
