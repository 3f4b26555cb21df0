-- Argo CD health check for bench.benchrun.io/BenchmarkSuite (resource.customizations.health.bench.benchrun.io_BenchmarkSuite).
-- Healthy: the suite Succeeded (every child run succeeded, its thresholds, if any, were met).
-- Degraded: the suite Failed: a child run failed (ChildFailed), the verdict failed (ThresholdsNotMet),
-- or a variant's child run was refused (InvalidVariant).
-- Progressing: Pending, Running (ended/total child runs), or a spec generation not picked up yet.
local hs = {}

local function condition(typ)
  if obj.status ~= nil and obj.status.conditions ~= nil then
    for _, c in ipairs(obj.status.conditions) do
      if c.type == typ then
        return c
      end
    end
  end
  return nil
end

if obj.status == nil or obj.status.phase == nil or obj.status.phase == "" then
  hs.status = "Progressing"
  hs.message = "Waiting for the benchrun operator to accept the suite"
  return hs
end

local st = obj.status
if obj.metadata.generation ~= nil and (st.observedGeneration == nil or st.observedGeneration < obj.metadata.generation) then
  hs.status = "Progressing"
  hs.message = "Waiting for generation " .. obj.metadata.generation .. " to be accepted"
  return hs
end

local done = condition("Succeeded")
local message = ""
if done ~= nil and done.message ~= nil then
  message = done.message
end

if st.phase == "Succeeded" then
  hs.status = "Healthy"
  if st.verdict == "Passed" then
    hs.message = "Thresholds met; " .. message
  else
    hs.message = message
  end
  return hs
end

if st.phase == "Failed" then
  hs.status = "Degraded"
  local reason = ""
  if done ~= nil and done.reason ~= nil then
    reason = done.reason .. ": "
  end
  hs.message = reason .. message
  return hs
end

hs.status = "Progressing"
if st.progress ~= nil and st.progress ~= "" then
  hs.message = st.phase .. ": " .. st.progress .. " child runs ended"
else
  hs.message = st.phase
end
return hs
