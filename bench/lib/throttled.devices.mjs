// Block devices of known, different read bandwidths on one machine, for measuring striping:
// loop devices (a sparse backing file each, ext4 on top, mounted), each capped by cgroup v1
// `blkio.throttle.read_bps_device` in a cgroup this process joins. The backing files sit in the
// page cache once written, so the cap, not the disk underneath, is each device's bandwidth.
// Needs root, cgroup v1 blkio and losetup/mkfs.ext4/mount; every step that fails says which and
// why, and `close()` undoes what was done (process back in its cgroup, unmount, detach, delete).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const BLKIO = '/sys/fs/cgroup/blkio';

const run = (cmd, args) => execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();

/** Why throttled devices cannot be set up here, or null when the prerequisites are present. */
export function throttlingUnavailable() {
  if (process.getuid?.() !== 0) return 'not root: loop devices, mounts and cgroups need root';
  if (!existsSync(join(BLKIO, 'blkio.throttle.read_bps_device')))
    return `no cgroup v1 blkio throttling at ${BLKIO} (cgroup v2 io.max is not used here)`;
  for (const tool of ['losetup', 'mkfs.ext4', 'mount', 'umount']) {
    try {
      run('sh', ['-c', `command -v ${tool}`]);
    } catch {
      return `${tool} not found`;
    }
  }
  return null;
}

/** This process's blkio cgroup path (relative to the hierarchy root), to return to. */
function ownCgroup() {
  const line = readFileSync('/proc/self/cgroup', 'utf8')
    .split('\n')
    .find((l) => l.split(':')[1]?.split(',').includes('blkio'));
  return line ? line.split(':').slice(2).join(':') : '/';
}

/**
 * `bps.length` mounted directories, directory i on a device read-capped at `bps[i]` bytes/s for
 * this process. Throws with the failing step; nothing is left behind on failure.
 * @param {{ base: string, bytesEach: number, bps: number[] }} o
 */
export function openThrottledDevices(o) {
  const why = throttlingUnavailable();
  if (why) throw new Error(why);
  const undo = [];
  const close = () => {
    const errors = [];
    for (const f of undo.reverse()) {
      try {
        f();
      } catch (e) {
        errors.push(e.message);
      }
    }
    undo.length = 0;
    if (errors.length) throw new Error(`cleaning up throttled devices: ${errors.join('; ')}`);
  };
  const step = (what, f) => {
    try {
      return f();
    } catch (e) {
      const detail = (e.stderr?.toString() || e.message).trim();
      try {
        close();
      } catch {
        // the set-up error is the one to report
      }
      throw new Error(`${what}: ${detail}`);
    }
  };
  const devices = o.bps.map((bps, i) => {
    const image = join(o.base, `throttled-${i}.img`);
    const dir = join(o.base, `throttled-${i}`);
    step(`backing file ${image}`, () => {
      writeFileSync(image, '');
      run('truncate', ['-s', String(o.bytesEach), image]);
    });
    undo.push(() => rmSync(image, { force: true }));
    const loop = step('losetup', () => run('losetup', ['-f', '--show', image]));
    undo.push(() => run('losetup', ['-d', loop]));
    step(`mkfs.ext4 ${loop}`, () => run('mkfs.ext4', ['-q', '-F', '-E', 'nodiscard', loop]));
    mkdirSync(dir, { recursive: true });
    step(`mount ${loop}`, () => run('mount', [loop, dir]));
    undo.push(() => run('umount', [dir]));
    const majMin = readFileSync(`/sys/block/${loop.replace('/dev/', '')}/dev`, 'utf8').trim();
    return { dir, loop, majMin, bps };
  });
  const group = join(BLKIO, `mnemo-bench-${process.pid}`);
  const home = join(BLKIO, ownCgroup(), 'cgroup.procs');
  step(`cgroup ${group}`, () => mkdirSync(group));
  undo.push(() => rmdirSync(group));
  for (const d of devices)
    step(`read cap on ${d.loop} (${d.majMin})`, () => writeFileSync(join(group, 'blkio.throttle.read_bps_device'), `${d.majMin} ${d.bps}`));
  step('joining the cgroup', () => writeFileSync(join(group, 'cgroup.procs'), String(process.pid)));
  undo.push(() => writeFileSync(home, String(process.pid)));
  const onSignal = () => {
    try {
      close();
    } finally {
      process.exit(130);
    }
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  undo.push(() => {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  });
  return { devices: devices.map(({ dir, loop, bps }) => ({ dir, loop, bps })), close };
}
