#!/usr/bin/env bash
# Lay out an editable install in a venv the way a ROS prefix is laid out, so that the same
# commands work from the venv as from a colcon workspace:
#   - the executables in <venv>/bin (typed by name once the venv is active) and in
#     <venv>/lib/transmission_bridge (where `ros2 run` and launch_ros look);
#   - share/transmission_bridge/{package.xml,launch/*,config/*} and the ament index marker,
#     linked file by file to the checkout (edits take effect at once, like colcon
#     --symlink-install; `ros2 launch` does not look inside linked folders);
#   - AMENT_PREFIX_PATH in bin/activate, so `ros2 launch transmission_bridge ...` finds them,
#     and the same in <venv>/local_setup.{sh,bash}: colcon warns about a prefix in
#     AMENT_PREFIX_PATH without one.
# Usage: scripts/venv_ros_layout.sh VENV
set -euo pipefail
venv=$(cd "$1" && pwd)
root=$(cd "$(dirname "$0")/.." && pwd)
pkg=transmission_bridge
lib="$venv/lib/$pkg"
mkdir -p "$lib" "$venv/share/$pkg" "$venv/share/ament_index/resource_index/packages"
# Console scripts: pip writes them to bin/ or, through setup.cfg [develop], to lib/<pkg>/.
for exe in $(sed -n "s/^ *'\([a-z_]*\) = transmission_bridge.*/\1/p" "$root/setup.py"); do
  if [ -f "$lib/$exe" ] && [ ! -L "$lib/$exe" ]; then
    ln -sf "../lib/$pkg/$exe" "$venv/bin/$exe"
  elif [ -f "$venv/bin/$exe" ] && [ ! -L "$venv/bin/$exe" ]; then
    ln -sf "../../bin/$exe" "$lib/$exe"
  fi
done
ln -sfn "$root/package.xml" "$venv/share/$pkg/package.xml"
for dir in launch config; do
  rm -rf "${venv:?}/share/$pkg/$dir"
  mkdir -p "$venv/share/$pkg/$dir"
  for f in "$root/$dir"/*.launch.py "$root/$dir"/*.yaml "$root/$dir"/*.urdf "$root/$dir"/*.xml; do
    [ -f "$f" ] && ln -s "$f" "$venv/share/$pkg/$dir/"
  done
done
: > "$venv/share/ament_index/resource_index/packages/$pkg"
marker='# transmission_bridge: ros2 and launch find packages installed in this venv'
prefix_lines() {   # $1: how the lines name the venv
  cat <<LINES
$marker
case ":\${AMENT_PREFIX_PATH:-}:" in
  *":$1:"*) ;;
  *) export AMENT_PREFIX_PATH="$1\${AMENT_PREFIX_PATH:+:\$AMENT_PREFIX_PATH}" ;;
esac
export RMW_IMPLEMENTATION="\${RMW_IMPLEMENTATION:-rmw_fastrtps_cpp}"
LINES
}
if ! grep -qF "$marker" "$venv/bin/activate"; then
  prefix_lines '$VIRTUAL_ENV' >> "$venv/bin/activate"
fi
prefix_lines "$venv" > "$venv/local_setup.sh"
cp "$venv/local_setup.sh" "$venv/local_setup.bash"
