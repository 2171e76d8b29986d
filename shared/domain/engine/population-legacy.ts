import { z } from 'zod';
import { DIMENSION_NAMES } from '../arms';
import { NEUTRAL_GRID } from './neutral-share';
import { CELL_COUNT, COMPLEXITY_COUNT, zeros } from './layout';

/**
 * Population priors stored in the `pop-v2` format, whose sums had one- and two-letter names
 * (n, r, w, wr, w2, cr, cn, rs, rs2, rn, err, …). The sums are the same; fromPopV2 gives them
 * the names of `pop-v3` (population.ts). Kept while a database written by an earlier build may hold such priors: a tenant's
 * prior is rewritten as v3 at its next merge.
 */
const cells = z.array(z.number()).length(CELL_COUNT);
const perDimension = z.array(z.number()).length(DIMENSION_NAMES.length);
const perComplexity = z.array(z.number()).length(COMPLEXITY_COUNT);

const popV2Schema = z.object({
  format: z.literal('pop-v2'),
  events: z.number().min(0),
  n: cells,
  r: cells,
  w: cells,
  wr: cells,
  w2: cells,
  cr: perComplexity,
  cn: perComplexity,
  follow: perDimension,
  users: perDimension,
  favS: perDimension,
  favN: perDimension,
  otherS: perDimension,
  otherN: perDimension,
  // Absent from priors written before task types were pooled.
  neutral: z
    .array(z.number())
    .length(NEUTRAL_GRID.length)
    .default(() => zeros(NEUTRAL_GRID.length)),
  rs: perDimension,
  rs2: perDimension,
  rn: perDimension,
  err: z.tuple([z.number(), z.number(), z.number()]),
});

/** A `pop-v2` prior's sums under their `pop-v3` names (without the format), or null when `raw` is not one. */
export function fromPopV2(raw: unknown) {
  const parsed = popV2Schema.safeParse(raw);
  if (!parsed.success) return null;
  const v2 = parsed.data;
  return {
    outcomeCount: v2.events,
    shownCount: v2.n,
    rewardSum: v2.r,
    ipsWeight: v2.w,
    ipsCreditedSum: v2.wr,
    ipsWeightSquares: v2.w2,
    complexityRewardSum: v2.cr,
    complexityCount: v2.cn,
    followerSum: v2.follow,
    userWeight: v2.users,
    favouriteLevelSum: v2.favS,
    favouriteLevelWeight: v2.favN,
    otherLevelSum: v2.otherS,
    otherLevelWeight: v2.otherN,
    // pop-v2 kept no within-user contrast: it starts again from the outcomes to come.
    contrastExcess: zeros(v2.rs.length),
    contrastScale: zeros(v2.rs.length),
    neutralLogLikelihood: v2.neutral,
    creditedSum: v2.rs,
    creditedSquares: v2.rs2,
    creditedCount: v2.rn,
    predictionErrors: v2.err,
  };
}
