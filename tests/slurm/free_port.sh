# Sourced by the Slurm test scripts: free_port prints a TCP port nobody listens on now, random
# so that clusters and jobs of tests running in parallel do not collide.
free_port() {
  local port
  while :; do
    port=$((20000 + RANDOM % 20000))
    ss -Hltn "sport = :$port" | grep -q . || { echo "$port"; return; }
  done
}
