import { z } from 'zod';
import { detachPartitionsBefore, listPartitions, MONTH_PATTERN, type PartitionInfo } from '../shared/db/partitions';
import { startOfMonth } from '../shared/limits/calendar';
import { stringFlag, UsageError } from './args';
import type { CommandContext, CommandOutput } from './commands';

/**
 * `cos partitions list | detach --before YYYY-MM`: the monthly partitions of decisions,
 * outcomes and profile versions (docs/adr/0013-monthly-partitions.md); traffic months are
 * listed but never detached, their retention deletes old rows. Nothing is ever dropped:
 * a detached month stays a plain table in the database (docs/OPERATIONS.md says how to move it to
 * cheaper storage).
 */
const monthFlag = z.string().regex(MONTH_PATTERN, 'use YYYY-MM');

const partitionJson = (p: PartitionInfo) => ({
  table: p.table,
  name: p.name,
  month: p.month,
  state: p.state,
  estimatedRows: p.estimatedRows,
  bytes: p.bytes,
});

const partitionText = (p: PartitionInfo) =>
  `${p.name}  ${p.table}  ${p.month ?? 'default'}  ${p.state}  ~${p.estimatedRows} rows  ${(p.bytes / 1_048_576).toFixed(1)} MiB`;

export const PARTITION_COMMANDS: Record<string, (ctx: CommandContext) => Promise<CommandOutput>> = {
  'partitions list': async ({ db }) => {
    const partitions = await listPartitions(db);
    return { json: { data: partitions.map(partitionJson) }, text: partitions.map(partitionText).join('\n') || '(no partitions)' };
  },
  'partitions detach': async ({ db, config, args }) => {
    const parsed = monthFlag.safeParse(stringFlag(args, 'before', true));
    if (!parsed.success) throw new UsageError(`invalid --before: ${parsed.error.issues.map((i) => i.message).join('; ')}`);
    const before = parsed.data;
    // A month still taking outcomes (its decisions' window not closed) stays attached.
    const latest = new Date(startOfMonth(Date.now() - config.OUTCOME_WINDOW)).toISOString().slice(0, 7);
    if (before > latest) {
      throw new UsageError(`--before ${before} would detach months still taking outcomes (OUTCOME_WINDOW): use ${latest} or earlier`);
    }
    const detached = await detachPartitionsBefore(db, before);
    return {
      json: { before, detached },
      text: detached.length > 0 ? `detached (kept as plain tables): ${detached.join(', ')}` : `no attached partition before ${before}`,
    };
  },
};
