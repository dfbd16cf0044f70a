"""The Lua functions the scripts of `scripts.py` share: Redis's clock, a job's next seq (and its jump
after a restart of Redis), the shared queue bound's count, a job's record checked and its next section
queued, and a job's end (`done`).

Apart from the scripts because each is one rule several scripts must apply alike; a script is these
pasted before its own body (Redis runs one text, so they are joined as strings, not called).
"""

from __future__ import annotations

from ..seq_jump import RESTART_TICK, SEQ_JUMP

# A section's work item is (job, pos): pos is the section's position in the request; `next` counts
# the positions already queued (a job keeps a small window of sections in the queue, so jobs
# interleave section by section, as the local admission serves them).
# Once per section (`adv:<idx>`): a script retried after a dropped reply, or a section run twice,
# never skips a position.
# Redis's own clock, in seconds: the one clock every node shares (a node's own may be skewed, and a job
# is begun on one node and ended on another).
CLOCK = """
local function clock()
  local t = redis.call('TIME')
  return tonumber(t[1]) + tonumber(t[2]) / 1000000
end
"""

# Every check and read a script needs comes before its first write: Redis does not roll a script back, so
# a call that fails halfway (a value planted by any local process: a log entry with a high id, a counter
# that is no number) would leave a job half-updated (`final` set but no event, `pending` never released).

# The next seq of a job's log, and whether the log can take it: past the highest id the stream ever had
# (an entry planted at `0-999` moves seq on past it, so the job still ends), or none when the log is not
# a stream of `0-<n>` ids (the event is then not logged; the job's counts and end still are).

RUN = """
local this_run = nil
local function run_id()
  if this_run == nil then  -- '' where INFO is refused (a renamed command): no jump, as before
    local info = redis.pcall('INFO', 'server')
    this_run = type(info) == 'string' and string.match(info, 'run_id:(%x+)') or ''
  end
  return this_run
end
"""

# After a restart of Redis (another run id than the job's last event was logged in), a job's seq jumps
# by SEQ_JUMP, and at least to Redis's clock in RESTART_TICKs: a Redis that crashed and loaded an older
# snapshot has forgotten its last events, whose seqs callers had read, and the events made again took
# those seqs (a stream open across it showed a section's `ok` twice and missed another's). The clock
# is what a crash loop needs: Redis loading one snapshot twice gave the same constant jump twice, and
# reused every seq of its first comeback; the clock has moved on by more ticks than that comeback logged
# events (each is a script run, longer than a tick). A graceful restart only makes the numbers larger.
SEQ = (
    RUN
    + """
local function log_position(seq, log_key)
  local kind = redis.call('TYPE', log_key).ok
  if kind == 'none' then return seq, true end
  if kind ~= 'stream' then return seq, false end
  local info = redis.call('XINFO', 'STREAM', log_key)
  for i = 1, #info, 2 do
    if info[i] == 'last-generated-id' then
      local ms, n = string.match(info[i + 1], '^(%d+)-(%d+)$')
      if ms ~= '0' or #n > 15 then return seq, false end
      return math.max(seq, tonumber(n)), true
    end
  end
  return seq, false
end

local function next_seq(job_key, log_key)
  local seq = tonumber(redis.call('HGET', job_key, 'seq'))
  if seq == nil then error('npu: job ' .. job_key .. ' has no seq of ours') end
  local last, usable = log_position(seq, log_key)
  local run = redis.call('HGET', job_key, 'run')
  if run and run ~= run_id() then  -- Redis restarted since its last event
    local t = redis.call('TIME')
    local ticks = tonumber(t[1]) * TICKS_PER_SECOND + math.floor(tonumber(t[2]) / MICROS_PER_TICK)
    last = math.max(last + SEQ_JUMP, ticks)
  end
  return last + 1, usable
end

local function log_event(job_key, log_key, seq, usable, body)
  -- written as digits: Redis turns a Lua number of 15 digits into '1.8e+14'-like text
  redis.call('HSET', job_key, 'seq', string.format('%d', seq), 'run', run_id())
  if usable then redis.call('XADD', log_key, '0-' .. string.format('%d', seq), 'e', body) end
  return seq
end
""".replace("SEQ_JUMP", str(SEQ_JUMP))
    .replace("TICKS_PER_SECOND", str(round(1 / RESTART_TICK)))
    .replace("MICROS_PER_TICK", str(round(RESTART_TICK * 1_000_000)))
)

# The sections not yet final over all jobs (`pending`). A value not of ours there (a string that is no
# integer, a key of another type) is counted again from the jobs under way, and Redis's log says so:
# never a refused submit or a script that fails after its first write.
WAITING = """
local function count_waiting()
  local count = 0
  for _, list in ipairs({'npu:jobs', 'npu:previews'}) do
    local ids = redis.pcall('ZRANGE', list, 0, -1)
    if type(ids) == 'table' and ids.err == nil then
      for _, id in ipairs(ids) do
        local job = redis.pcall('HMGET', 'npu:job:' .. id, 'done', 'total')
        if type(job) == 'table' and job[1] == '0' and tonumber(job[2]) then  -- under way
          local made = redis.pcall('HLEN', 'npu:final:' .. id)
          if type(made) == 'number' then count = count + math.max(0, tonumber(job[2]) - made) end
        end
      end
    end
  end
  return count
end

local function waiting(key)
  local kind = redis.call('TYPE', key).ok
  if kind == 'none' then return 0 end
  if kind == 'string' then
    local raw = redis.call('GET', key)
    if string.match(raw, '^-?%d+$') and #raw < 16 then return tonumber(raw) end
  end
  local count = count_waiting()
  redis.log(redis.LOG_WARNING, 'npu: ' .. key .. ' was not a count; recounted as ' .. count)
  redis.call('DEL', key)
  redis.call('SET', key, count)
  return count
end
"""

ADVANCE = """
-- The job record's numbers and the batch stream, checked before a script's first write (see above).
local function check_job(job_key, batch_key)
  local job = redis.call('HMGET', job_key, 'total', 'seq', 'next', 'ok', 'fail', 'began')
  for i = 1, #job do
    if tonumber(job[i]) == nil then error('npu: job ' .. job_key .. ' is not a record of ours') end
  end
  local kind = redis.call('TYPE', batch_key).ok
  if kind ~= 'stream' and kind ~= 'none' then error('npu: ' .. batch_key .. ' is not a stream') end
  return tonumber(job[1])
end

local function advance(job_key, batch_key, job_id, idx)
  if redis.call('HSETNX', job_key, 'adv:' .. idx, 1) == 0 then return end
  local total = tonumber(redis.call('HGET', job_key, 'total'))
  local pos = redis.call('HINCRBY', job_key, 'next', 1) - 1
  if pos < total then redis.call('XADD', batch_key, '*', 'job', job_id, 'pos', pos) end
end
"""

# Seconds an ended preview's keys live at most: the accepting node's retention removes them 30 s after
# the end; this is for a node that never comes back (scaled down, its state dir lost).
PREVIEW_EXPIRY = 600

# The end time (`finished`, the score retention reads) and elapsed_total_sec are Redis's clock.
DONE = (
    CLOCK
    + SEQ
    + """
local function expire_preview(job_key, log_key, final_key, previews_key, job_id, now)
  local expiry = PREVIEW_EXPIRY
  redis.call('ZADD', previews_key, now, job_id)
  redis.call('EXPIRE', previews_key, expiry)  -- refreshed by each preview's end: members go sooner
  redis.call('ZREM', 'npu:previews', job_id)  -- the index of previews under way
  for _, key in ipairs({job_key, log_key, final_key}) do redis.call('EXPIRE', key, expiry) end
  local ok, spec = pcall(cjson.decode, redis.call('HGET', job_key, 'spec'))
  if ok and type(spec) == 'table' and type(spec.sections) == 'table' then
    for _, section in ipairs(spec.sections) do
      if type(section) == 'table' and type(section.idx) == 'number' then
        redis.call('EXPIRE', 'npu:wav:' .. job_id .. ':' .. string.format('%d', section.idx), expiry)
      end
    end
  end
end

-- Called last, after the script's own event (if any): its reads were checked before that first write.
local function finish(job_key, log_key, final_key, finished_key, job_id, cancelled)
  local job = redis.call('HMGET', job_key, 'total', 'ok', 'fail', 'began')
  local now = clock()
  local elapsed = math.max(0, math.floor((now - tonumber(job[4] or now)) * 1000 + 0.5) / 1000)
  local body = cjson.encode({event='done', total=tonumber(job[1]), ok_count=tonumber(job[2]),
    fail_count=tonumber(job[3]), elapsed_total_sec=elapsed, cancelled=cancelled})
  local seq, usable = next_seq(job_key, log_key)
  log_event(job_key, log_key, seq, usable, body)
  redis.call('HSET', job_key, 'done', 1, 'finished', now)
  if redis.call('HGET', job_key, 'preview') == '1' then  -- not a job to keep: retention removes it soon
    expire_preview(job_key, log_key, final_key, finished_key .. ':previews', job_id, now)
  else
    redis.call('ZADD', finished_key, now, job_id)
  end
  return seq, body
end
""".replace("PREVIEW_EXPIRY", str(PREVIEW_EXPIRY))
)
