#!/bin/sh
# Host-side checks that get_{mm,task}_exe_file stay unexported and of the
# "no process name" rule, as TAP. usage: exports.sh <kernel objdir> <scratch dir>
set -u
obj=$(cd "${1:?usage: exports.sh objdir scratch}" && pwd)
scratch=${2:?}
repo=$(cd "$(dirname "$0")/../.." && pwd)
symvers=$obj/Module.symvers
. "$repo/tests/tap.sh"

exported() { awk -v s="$1" '$2 == s { found = 1 } END { exit !found }' "$symvers"; }

tap_start

# get_task_mm: the check reads a real symbol list.
exported get_task_mm; tap_result $? "symbol-exported@get-task-mm"
! exported get_mm_exe_file; tap_result $? "symbol-not-exported@get-mm-exe-file"
! exported get_task_exe_file; tap_result $? "symbol-not-exported@get-task-exe-file"

# The linux-next break of 2021: modpost must refuse a module that calls
# get_mm_exe_file(), and for exactly that reason.
rm -rf "$scratch" && mkdir -p "$scratch" && scratch=$(cd "$scratch" && pwd)
cp -r "$repo/tests/modules/exe_file_probe" "$repo/tests/modules/exported_twin" "$scratch/"
make -C "$obj" M="$scratch/exe_file_probe" modules > "$scratch/probe.log" 2>&1
probe_rc=$?
[ $probe_rc -ne 0 ]; tap_result $? "get-mm-exe-file-caller-does-not-build"
grep -Eq 'ERROR: modpost: "get_mm_exe_file" \[.*exe_file_probe\.ko\] undefined!' "$scratch/probe.log"
tap_result $? "modpost-reports-get-mm-exe-file-undefined"
[ $probe_rc -ne 0 ] || sed 's/^/# /' "$scratch/probe.log"

make -C "$obj" M="$scratch/exported_twin" modules > "$scratch/twin.log" 2>&1 &&
	[ -f "$scratch/exported_twin/exported_twin.ko" ]
twin_rc=$?
tap_result $twin_rc "exported-twin-builds"
[ $twin_rc -eq 0 ] || sed 's/^/# /' "$scratch/twin.log"

# Nothing the series adds may look at what the client is called.
names='get_mm_exe_file|get_task_exe_file|get_task_comm|->comm\b|proc_pid_cmdline|exe_file'
grep -hE '^\+' "$repo"/patches/$TREE/0*.patch | grep -v '^+++' | grep -E "$names" > "$scratch/names.log"
[ ! -s "$scratch/names.log" ]; tap_result $? "no-process-name-reads"
sed 's/^/# /' "$scratch/names.log"

tap_done
