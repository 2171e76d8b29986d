import { changedFields, shownProfile } from '../../shared/profile/profile';

const summary = {
  best: { framing: 'purpose', style: 'direct', complexityHandling: 'chunked', encouragement: 'minimal' },
  phase: 'cold_start',
  interactionCount: 3,
} as const;

describe('changedFields', () => {
  it('names nothing when the shown profile is the same, lists included', () => {
    const pins = { style: 'warm' } as const;
    expect(changedFields(shownProfile(pins, summary, 3), shownProfile({ ...pins }, { ...summary }, 3))).toEqual([]);
  });

  it('names each field whose value changed, in the order of the version history', () => {
    const before = shownProfile({}, summary, 3);
    const after = shownProfile(
      {},
      { best: { ...summary.best, framing: 'curiosity', encouragement: 'enthusiastic' }, phase: 'learning', interactionCount: 4 } as const,
      4,
    );
    expect(changedFields(before, after)).toEqual(['preferredFraming', 'encouragementLevel', 'profilePhase', 'interactionCount']);
  });

  it('names pinned when the pinned list differs in length or in an item', () => {
    const none = shownProfile({}, summary, 3);
    const style = shownProfile({ style: 'direct' }, summary, 3);
    const framing = shownProfile({ framing: 'purpose' }, summary, 3);
    // The pinned values equal the learned ones here, so only the list changes.
    expect(changedFields(none, style)).toEqual(['pinned']);
    expect(changedFields(style, framing)).toEqual(['pinned']);
  });
});
