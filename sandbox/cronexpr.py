"""A small 5-field cron parser and next-run calculator with the rules of gdgvda/cron's StandardOptions."""

import calendar
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

_MONTHS = {m: i for i, m in enumerate(("JAN FEB MAR APR MAY JUN JUL AUG SEP OCT NOV DEC").split(), start=1)}
_DAYS = {d: i for i, d in enumerate(("SUN MON TUE WED THU FRI SAT").split())}
_DESCRIPTORS = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}
_GO_DURATION = re.compile(r"^(?:(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h))+$")
_GO_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)")
_UNIT_SECONDS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
# How far ahead a schedule may first fire before we call it unsatisfiable (e.g. "0 0 30 2 *").
_HORIZON_DAYS = 366 * 5


class CronError(ValueError):
    """The schedule or time zone cannot be used; the message mirrors the Go library's wording."""


@dataclass(frozen=True)
class _DaySpec:
    """The day-of-month or day-of-week field: plain values plus the L / W / # specials."""

    values: frozenset[int]
    star: bool
    last: bool = False  # dom "L"
    weekday_near: frozenset[int] = frozenset()  # dom "15W"
    last_weekday: frozenset[int] = frozenset()  # dow "5L" (last Friday)
    nth: frozenset[tuple[int, int]] = frozenset()  # dow "1#2" (second Monday)

    def matches_dom(self, day: datetime) -> bool:
        last_day = calendar.monthrange(day.year, day.month)[1]
        if day.day in self.values or (self.last and day.day == last_day):
            return True
        return any(_nearest_weekday(day.year, day.month, n) == day.day for n in self.weekday_near)

    def matches_dow(self, day: datetime) -> bool:
        dow = (day.weekday() + 1) % 7  # Python: Monday=0; cron: Sunday=0
        if dow in self.values:
            return True
        last_day = calendar.monthrange(day.year, day.month)[1]
        if dow in self.last_weekday and day.day + 7 > last_day:
            return True
        return (dow, (day.day - 1) // 7 + 1) in self.nth


@dataclass(frozen=True)
class Schedule:
    minutes: frozenset[int]
    hours: frozenset[int]
    dom: _DaySpec
    months: frozenset[int]
    dow: _DaySpec
    every: timedelta | None = None
    tz: ZoneInfo | None = None

    def next_after(self, now: datetime) -> datetime:
        """The first activation strictly after `now` (an aware datetime), as an aware datetime."""
        if self.every is not None:
            # `@every` fires on whole seconds counted from now, like robfig/gdgvda's ConstantDelaySchedule.
            step = max(self.every, timedelta(seconds=1))
            return (now + step).replace(microsecond=0)
        tz = self.tz or now.tzinfo or UTC
        local = now.astimezone(tz).replace(second=0, microsecond=0) + timedelta(minutes=1)
        day = local.replace(hour=0, minute=0)
        for _ in range(_HORIZON_DAYS):
            if day.month in self.months and self._day_matches(day):
                for hour in sorted(self.hours):
                    for minute in sorted(self.minutes):
                        candidate = day.replace(hour=hour, minute=minute)
                        if candidate >= local:
                            return candidate
            day = (day + timedelta(days=1)).replace(hour=0, minute=0)
            local = day
        raise CronError("schedule never fires")

    def _day_matches(self, day: datetime) -> bool:
        if self.dom.star or self.dow.star:
            # A star (or ?) on one side means only the other side restricts the day.
            return self.dom.matches_dom(day) and self.dow.matches_dow(day)
        return self.dom.matches_dom(day) or self.dow.matches_dow(day)


def _nearest_weekday(year: int, month: int, n: int) -> int:
    last = calendar.monthrange(year, month)[1]
    n = min(n, last)
    wd = calendar.weekday(year, month, n)
    if wd == 5:  # Saturday -> Friday, unless that leaves the month
        return n - 1 if n > 1 else n + 2
    if wd == 6:  # Sunday -> Monday, unless that leaves the month
        return n + 1 if n < last else n - 2
    return n


def _number(token: str, lo: int, hi: int, names: dict[str, int], field: str) -> int:
    upper = token.upper()
    if upper in names:
        return names[upper]
    if not token.isdigit():
        raise CronError(f"failed to parse int from {token}: strconv.Atoi: parsing {token!r}: invalid syntax")
    value = int(token)
    if field == "dow" and value == 7:
        return 0
    if value < lo:
        raise CronError(f"beginning of range ({value}) below minimum ({lo}): {token}")
    if value > hi:
        raise CronError(f"end of range ({value}) above maximum ({hi}): {token}")
    return value


def _range(part: str, lo: int, hi: int, names: dict[str, int], field: str) -> set[int]:
    step = 1
    if "/" in part:
        part, step_s = part.split("/", 1)
        if not step_s.isdigit() or int(step_s) == 0:
            raise CronError(f"step of range should be a positive number: {step_s}")
        step = int(step_s)
    if part in ("*", "?"):
        start, end = lo, hi
    elif "-" in part:
        a, b = part.split("-", 1)
        start, end = _number(a, lo, hi, names, field), _number(b, lo, hi, names, field)
        if field == "dow" and b == "7":
            # 7 is another name for Sunday: "5-7" means Friday to Sunday.
            values = set(range(start, 7, step))
            return values | {0} if (7 - start) % step == 0 else values
        if start > end:
            raise CronError(f"beginning of range ({start}) beyond end of range ({end}): {part}")
    else:
        start = _number(part, lo, hi, names, field)
        end = hi if step > 1 else start
    return set(range(start, end + 1, step))


def _simple_field(text: str, lo: int, hi: int, names: dict[str, int], field: str) -> frozenset[int]:
    out: set[int] = set()
    for part in text.split(","):
        if part == "?" and field not in ("dom", "dow"):
            raise CronError(f"'?' is not allowed in the {field} field")
        out |= _range(part, lo, hi, names, field)
    return frozenset(out)


def _dom_field(text: str) -> _DaySpec:
    values: set[int] = set()
    near: set[int] = set()
    last = False
    for part in text.split(","):
        if part == "L":
            last = True
        elif part.endswith("W") and part[:-1].isdigit():
            near.add(_number(part[:-1], 1, 31, {}, "dom"))
        else:
            values |= _range(part, 1, 31, {}, "dom")
    return _DaySpec(frozenset(values), star=text in ("*", "?"), last=last, weekday_near=frozenset(near))


def _dow_field(text: str) -> _DaySpec:
    values: set[int] = set()
    last_wd: set[int] = set()
    nth: set[tuple[int, int]] = set()
    for part in text.split(","):
        if "#" in part:
            day_s, n_s = part.split("#", 1)
            if not n_s.isdigit() or not 1 <= int(n_s) <= 5:
                raise CronError(f"invalid nth weekday: {part}")
            nth.add((_number(day_s, 0, 7, _DAYS, "dow"), int(n_s)))
        elif part.upper().endswith("L") and len(part) > 1:
            last_wd.add(_number(part[:-1], 0, 7, _DAYS, "dow"))
        else:
            values |= _range(part, 0, 6, _DAYS, "dow")
    return _DaySpec(
        frozenset(values), star=text in ("*", "?"), last_weekday=frozenset(last_wd), nth=frozenset(nth)
    )


def load_timezone(name: str) -> ZoneInfo:
    """Go's time.LoadLocation: "" and "UTC" are UTC, "Local" is refused here, otherwise an IANA name."""
    if name in ("", "UTC"):
        return ZoneInfo("UTC")
    try:
        if name.startswith("/") or ".." in name:
            raise ValueError(name)
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise CronError(f"unknown time zone {name}") from exc


def parse(spec: str) -> Schedule:
    """Parse a schedule; raises CronError with the Go library's messages for the common mistakes."""
    text = spec.strip()
    tz: ZoneInfo | None = None
    if text.startswith(("TZ=", "CRON_TZ=")):
        head, _, text = text.partition(" ")
        tz = load_timezone(head.split("=", 1)[1])
        text = text.strip()
    if not text:
        raise CronError("empty spec string")
    if text.startswith("@every "):
        duration = text[len("@every ") :].strip()
        if not _GO_DURATION.match(duration):
            raise CronError(f"failed to parse duration {text}: time: invalid duration {duration!r}")
        seconds = sum(float(n) * _UNIT_SECONDS[u] for n, u in _GO_DURATION_PART.findall(duration))
        star = _DaySpec(frozenset(), star=True)
        return Schedule(
            frozenset(), frozenset(), star, frozenset(), star, every=timedelta(seconds=seconds), tz=tz
        )
    if text.startswith("@"):
        if text not in _DESCRIPTORS:
            raise CronError(f"unrecognized descriptor: {text}")
        text = _DESCRIPTORS[text]
    fields = text.split()
    if len(fields) != 5:
        raise CronError(f"expected exactly 5 fields, found {len(fields)}: [{' '.join(fields)}]")
    minute, hour, dom, month, dow = fields
    return Schedule(
        minutes=_simple_field(minute, 0, 59, {}, "minute"),
        hours=_simple_field(hour, 0, 23, {}, "hour"),
        dom=_dom_field(dom),
        months=_simple_field(month, 1, 12, _MONTHS, "month"),
        dow=_dow_field(dow),
        tz=tz,
    )


def next_exec(spec: str, timezone: str, now: float) -> int:
    """Unix seconds of the next run after `now` for a schedule evaluated in `timezone` (CalcNewNext)."""
    schedule = parse(spec)
    zone = load_timezone(timezone)
    start = datetime.fromtimestamp(now, tz=zone)
    return int(schedule.next_after(start).timestamp())
