import t from 'tap';
import { parseShardList } from '../../cli/shard-list.js';

t.test('--shards takes numbers and ranges, sorted without repeats', async (t) => {
  t.same(parseShardList('0-3'), [0, 1, 2, 3]);
  t.same(parseShardList('2,0'), [0, 2]);
  t.same(parseShardList('0-1, 4,1'), [0, 1, 4]);
  t.same(parseShardList('7'), [7]);
});

t.test('--shards refuses what is not a list of shards, saying what', async (t) => {
  t.throws(() => parseShardList(''), /is not a shard number or range/);
  t.throws(() => parseShardList('a'), /"a" is not a shard number/);
  t.throws(() => parseShardList('3-1'), /the range 3-1 is empty/);
  t.throws(() => parseShardList('-1'), /is not a shard number/);
  t.throws(() => parseShardList('0,,1'), /is not a shard number/);
});
