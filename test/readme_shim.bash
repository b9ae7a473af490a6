# Sourced before a README scenario (test_readme.py): lets a script run what a person types in
# two terminals. Every command still runs for real; these functions only decide how to wait:
#   ros2 launch ... / ros2 run <node>   run in the background (a person's terminal 1) until the
#                                       next launch (a person presses Ctrl-C first) or the end;
#                                       the script goes on once every started node is up
#   ros2 topic pub ... (no --once/-t)   runs in the background, like ros2 launch
#   ros2 topic echo ...                 takes the first message (--once) and must get one
#   ros2 param ... / ros2 lifecycle ... retried while the daemon has not discovered the node
#   ros2 service call ...               must answer success=True
#   ros2 action send_goal ...           must end with status SUCCEEDED
#   (both run again when no answer came in 15 s: Fast DDS drops the answer to a client it
#   has not matched within 100 ms, ros2/rmw_fastrtps#842; a person would press Ctrl-C and
#   repeat the command)
# With TB_STANDIN_MOTORS=1, once a robot.launch.py/bridge.launch.py is up, actuator_simulator
# stands in for the motor drivers a real robot has, on the bridge's transmissions_file.
# On exit every background command gets Ctrl-C and must end with code 0, and the ros2 daemon
# of the test's domain stops.
# Needs: TB_LOGS (folder for background logs). Functions run without errexit (`local -`).

__tb_pids=()
__tb_logs=()
__tb_oks=()       # per background command: the exit codes that are a clean stop
__tb_fail() {
  local -; set +e
  echo "README test: $*" >&2; exit 97; }

__tb_stop_all() {
  local -; set +e
  local i code=0
  for i in "${!__tb_pids[@]}"; do
    local pid=${__tb_pids[$i]}
    if kill -0 "$pid" 2>/dev/null; then
      kill -INT -- "-$pid" 2>/dev/null || kill -INT "$pid"
      local n=0
      while kill -0 "$pid" 2>/dev/null && [ $n -lt 200 ]; do sleep 0.1; n=$((n + 1)); done
      kill -0 "$pid" 2>/dev/null && { kill -KILL -- "-$pid"; code=98; }
    fi
    local rc=0; wait "$pid" || rc=$?
    if [[ " ${__tb_oks[$i]:-0} " != *" $rc "* ]]; then
      echo "README test: background \`$(head -c 300 "${__tb_logs[$i]}.cmd")\` ended with $rc:" >&2
      cat "${__tb_logs[$i]}" >&2; code=96
    fi
  done
  __tb_pids=(); __tb_logs=(); __tb_oks=()
  return $code
}
# The daemon stops even when a background command failed: left running, it would stay in the
# test run's domain for every later test.
trap '__tb_rc=0; __tb_stop_all || __tb_rc=$?
      command ros2 daemon stop >/dev/null 2>&1
      [ "$__tb_rc" -eq 0 ] || exit "$__tb_rc"' EXIT

__tb_background() {  # log_name command...
  local -; set +e
  local log="$TB_LOGS/$1.$(date +%s%N).log"; shift
  printf '%s ' "$@" > "$log.cmd"
  set -m
  "$@" > "$log" 2>&1 &
  set +m
  __tb_pids+=($!); __tb_logs+=("$log"); __tb_oks+=("${__tb_ok_codes:-0}")
  __tb_last_log=$log
}

__tb_wait_up() {  # log pid: every node the launch started has logged its first INFO line
  local -; set +e
  local log=$1 pid=$2 n=0
  while [ $n -lt 600 ]; do
    if ! kill -0 "$pid" 2>/dev/null; then cat "$log" >&2; __tb_fail "\`$(cat "$log.cmd")\` ended early"; fi
    grep -q 'process has died' "$log" && { cat "$log" >&2; __tb_fail 'a node died'; }
    local started ready
    started=$(grep -c 'process started with pid' "$log")
    ready=$(grep -cE '\[INFO\] \[[0-9.]+\] \[(transmission_bridge|kinematics|actuator_simulator)\]: ' "$log")
    [ "$started" -eq 0 ] && started=1     # ros2 run: one node, no launch lines
    [ "$ready" -ge "$started" ] && return 0
    sleep 0.1; n=$((n + 1))
  done
  cat "$log" >&2; __tb_fail "\`$(cat "$log.cmd")\` did not come up in 60 s"
}

__tb_has() {
  local -; set +e
  local want=$1; shift; for a in "$@"; do [ "$a" = "$want" ] && return 0; done; return 1; }

ros2() {
  local -; set +e
  if [ "$1" = launch ] && ! __tb_has --show-args "$@" && ! __tb_has -s "$@"; then
    __tb_stop_all || exit $?
    __tb_background launch command ros2 "$@"
    __tb_wait_up "$__tb_last_log" "${__tb_pids[-1]}"
    [ "${TB_STANDIN_MOTORS:-}" = 1 ] && case "$3" in robot.launch.py|bridge.launch.py)
      local tf; tf=$(ros2 param get /transmission_bridge transmissions_file)
      tf=${tf#String value is: }
      [ -f "$tf" ] || __tb_fail "cannot tell the bridge's transmissions_file: $tf"
      __tb_background motors command ros2 run transmission_bridge actuator_simulator \
        --ros-args -p transmissions_file:="$tf"
      __tb_wait_up "$__tb_last_log" "${__tb_pids[-1]}"
      # as on a robot whose drivers already run: the bridge has motor states before the next line
      timeout 60 "$(type -P ros2)" topic echo --once /joint_states sensor_msgs/msg/JointState \
        > /dev/null || __tb_fail 'the bridge published no joint_states from the stand-in motors';;
    esac
    return 0
  fi
  if [ "$1" = run ] && [[ "$3" =~ ^(transmission_bridge|kinematics|actuator_simulator)$ ]] \
      && ! __tb_has --help "$@" && ! __tb_has -h "$@"; then
    __tb_background run command ros2 "$@"
    __tb_wait_up "$__tb_last_log" "${__tb_pids[-1]}"
    return 0
  fi
  if [ "$1" = topic ] && [ "$2" = pub ] && ! __tb_has --once "$@" && ! __tb_has -1 "$@" \
      && ! __tb_has -t "$@" && ! __tb_has --times "$@"; then
    # A publisher left running, as in a second terminal; Ctrl-C ends `ros2 topic pub` with 2.
    __tb_ok_codes='0 2' __tb_background pub command ros2 "$@"
    return 0
  fi
  if [ "$1" = topic ] && [ "$2" = echo ]; then
    shift 2
    timeout 60 "$(type -P ros2)" topic echo --once "$@" || __tb_fail "no message on $1"
    return 0
  fi
  if [ "$1" = param ] || [ "$1" = lifecycle ]; then
    local out rc n=0 lost=0
    while :; do
      out=$(timeout 15 "$(type -P ros2)" "$@" 2>&1); rc=$?
      [ $rc -eq 124 ] && [ $lost -lt 3 ] && { lost=$((lost + 1)); continue; }
      [[ "$out" == *"Node not found"* ]] && [ $n -lt 60 ] && { sleep 0.5; n=$((n + 1)); continue; }
      break
    done
    printf '%s\n' "$out"
    [ $rc -eq 0 ] || __tb_fail "ros2 $* exited with $rc"
    [ "$2" = set ] && [[ "$out" != *"successful"* ]] && __tb_fail "ros2 $* was refused"
    return 0
  fi
  if [ "$1" = action ] && [ "$2" = send_goal ]; then
    # A goal must reach its end, and succeed (ros2 action exits 0 whatever the status).
    local out rc
    out=$(timeout 60 "$(type -P ros2)" "$@" 2>&1); rc=$?
    printf '%s\n' "$out"
    [ $rc -eq 0 ] || __tb_fail "ros2 $* failed ($rc)"
    [[ "$out" == *"Goal finished with status: SUCCEEDED"* ]] || __tb_fail "ros2 $* did not succeed"
    return 0
  fi
  if [ "$1" = service ] && [ "$2" = call ]; then
    local out rc n=0
    while :; do
      out=$(timeout 15 "$(type -P ros2)" "$@" 2>&1); rc=$?
      [ $rc -eq 124 ] && [ $n -lt 3 ] && { n=$((n + 1)); continue; }
      break
    done
    [ $rc -eq 0 ] || __tb_fail "ros2 $* failed ($rc): $out"
    printf '%s\n' "$out"
    [[ "$out" == *"success=True"* ]] || __tb_fail "ros2 $* did not succeed"
    return 0
  fi
  command ros2 "$@"
}
