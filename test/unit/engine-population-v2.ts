import type { PopulationPrior } from '../../shared/domain/engine/population';

/** A prior as an earlier build stored it: the `pop-v2` format, with the sums' short names. */
export function popV2(prior: PopulationPrior) {
  return {
    format: 'pop-v2',
    events: prior.outcomeCount,
    n: prior.shownCount,
    r: prior.rewardSum,
    w: prior.ipsWeight,
    wr: prior.ipsCreditedSum,
    w2: prior.ipsWeightSquares,
    cr: prior.complexityRewardSum,
    cn: prior.complexityCount,
    follow: prior.followerSum,
    users: prior.userWeight,
    favS: prior.favouriteLevelSum,
    favN: prior.favouriteLevelWeight,
    otherS: prior.otherLevelSum,
    otherN: prior.otherLevelWeight,
    neutral: prior.neutralLogLikelihood,
    rs: prior.creditedSum,
    rs2: prior.creditedSquares,
    rn: prior.creditedCount,
    err: prior.predictionErrors,
  };
}
