# Sourced by the Slurm test scripts: free_port prints a TCP port nobody listens on now, random,
# and below Linux's ephemeral range (32768-60999 by default, ip_local_port_range): the kernel
# hands those to outgoing connections and to other tests' `bind(port 0)` (tests/runtime), so
# one chosen there could be taken before the cluster or the job binds it.
free_port() {
  local port
  while :; do
    port=$((20000 + RANDOM % 12000))
    ss -Hltn "sport = :$port" | grep -q . || { echo "$port"; return; }
  done
}

# free_ports N prints N distinct free ports (free_port), one per line.
free_ports() {
  local -a found=()
  local port
  while [ "${#found[@]}" -lt "$1" ]; do
    port=$(free_port)
    [[ " ${found[*]} " == *" $port "* ]] || found+=("$port")
  done
  printf '%s\n' "${found[@]}"
}
