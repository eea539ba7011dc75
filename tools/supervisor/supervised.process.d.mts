import type { ChildProcess } from 'node:child_process';
import type { RestartPolicy } from './restart.policy.mjs';
export interface SupervisedOptions {
  name: string;
  args: string[];
  env: Record<string, string | undefined>;
  cwd: string;
  restart?: boolean;
  policy?: RestartPolicy;
  onLine?: (line: string) => void;
  onExit?: (info: { code: number | null; signal: string | null; restartInMs: number | null }) => void;
}
export class SupervisedProcess {
  constructor(o: SupervisedOptions);
  readonly restarts: number[];
  child: ChildProcess | undefined;
  exited: Promise<void>;
  readonly running: boolean;
  start(): ChildProcess;
  stop(graceMs?: number): Promise<void>;
  killNow(): void;
}
