import { readdirSync, readFileSync } from 'node:fs';

/**
 * Memory of the soak's processes, from Linux /proc: a process's resident set (RSS), and for
 * Postgres the proportional set (PSS) summed over the postmaster and its backends — their RSS
 * would count the shared buffers once per backend.
 */
function read(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

/** A field in kB of /proc/<pid>/status or smaps_rollup, in MB (null when the process is gone). */
function fieldMb(file: string, field: string): number | null {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(read(file));
  return match ? Math.round(Number(match[1]) / 102.4) / 10 : null;
}

export const rssMb = (pid: number | undefined): number | null => (pid === undefined ? null : fieldMb(`/proc/${pid}/status`, 'VmRSS'));

/** PSS of a process and its children (MB). */
export function treePssMb(root: number | undefined): number | null {
  if (root === undefined) return null;
  const pids = [root];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const stat = read(`/proc/${name}/stat`);
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (ppid === root) pids.push(Number(name));
  }
  const sizes = pids.map((pid) => fieldMb(`/proc/${pid}/smaps_rollup`, 'Pss') ?? rssMb(pid) ?? 0);
  return sizes[0] === 0 ? null : Math.round(sizes.reduce((sum, mb) => sum + mb, 0) * 10) / 10;
}
