//! `[[traffic]] kind = "web"`: web-like on/off sources (VCP-DCCP §4, `crate::web`), checked
//! and resolved into one [`SourceSpec`] per source. Their flows are made during the run, so
//! what they cost is estimated here from the think time's mean (`limits.rs`).

use super::ctx::Ctx;
use super::error::ScenarioError;
use super::flows::{endpoints, time_opt, FlowBuilder};
use super::host_options::host_opts;
use super::limits;
use super::raw::{RawFile, RawThink, RawTraffic};
use super::spec::SourceSpec;
use super::units::{Amount, Seconds, Size};
use crate::web::{FileSize, LogLogistic, ThinkTime, WebLaw, MAX_FILE_BYTES};
use racc_proto::packet::hdr::payload;
use serde_json::json;
use std::sync::Arc;

impl FlowBuilder<'_> {
    pub(super) fn web_generator(&mut self, ti: usize, t: &RawTraffic) -> Result<(), ScenarioError> {
        let (cx, packet_size, duration) = (self.cx, self.packet_size, self.duration);
        let key = format!("traffic[{ti}]");
        for (k, present) in
            [("rate", t.rate.is_some()), ("size", t.size.is_some()), ("max_flows", t.max_flows.is_some())]
        {
            if present {
                return Err(cx.err(
                    format!("{key}.{k}"),
                    "not a key of the 'web' kind: a web source's transfers follow its think-time and file laws \
                     (`think`, `file`) and its number of sources (`sources`)",
                ));
            }
        }
        let opts = host_opts(cx, &key, &t.protocol, &t.host_options(), self.handshake, packet_size)?;
        let n = t.sources.ok_or_else(|| cx.err(format!("{key}.sources"), "missing: the number of web sources"))?;
        if !(1..=10_000_000).contains(&n) {
            return Err(cx.err(format!("{key}.sources"), format!("must be 1..10000000, got {n}")));
        }
        let offset = t.index_offset.unwrap_or(0);
        if offset < 0 {
            return Err(cx.err(format!("{key}.index_offset"), "must be >= 0"));
        }
        let stride = t.index_stride.unwrap_or(1);
        if !(1..=1_000_000).contains(&stride) {
            return Err(cx.err(format!("{key}.index_stride"), format!("must be 1..1000000, got {stride}")));
        }
        let start = time_opt(cx, &format!("{key}.start"), t.start)?.unwrap_or(0);
        let stop = time_opt(cx, &format!("{key}.stop"), t.stop)?.unwrap_or(duration).min(duration);
        if start >= stop {
            return Err(cx.err(format!("{key}.start"), "no time left for transfers before stop / the end of the run"));
        }
        let think = think_law(cx, &format!("{key}.think"), t.think.as_ref())?;
        if t.arrivals.is_some() {
            return Err(cx.err(format!("{key}.arrivals"), "a key of the 'trace' kind, not of 'web'"));
        }
        let file = match &t.file {
            None => None,
            Some(v) => Some(file_table(cx, &format!("{key}.file"), v)?),
        };
        let file = file_law(cx, &format!("{key}.file"), file.as_ref(), packet_size)?;
        let name = t.name.clone().unwrap_or_else(|| format!("traffic{ti}"));

        // Each source makes at most one transfer per think time: (stop - start) / E[T] per source
        // over-estimates the count by ignoring the transfers' own durations.
        let per_source = (stop - start) as f64 * 1e-9 / think.mean();
        let expected = n as f64 * per_source;
        let left = limits::flows_left(&self.limits, self.used());
        if expected > left as f64 {
            let what = format!(
                "{n} web sources for {} s with a mean think time of {:.3} s make up to about {expected:.3e} flows",
                (stop - start) as f64 * 1e-9,
                think.mean()
            );
            return Err(limits::too_many_flows(cx, &format!("{key}.sources"), &self.limits, what));
        }
        self.expected_made += expected;

        let law_params = |i: usize| {
            json!({
                "source": i,
                "think": { "p_h": think.p_h, "pi_h_s": think.h.median, "eta_h": think.h.shape,
                           "p_l": think.p_l, "pi_l_s": think.l.median, "eta_l": think.l.shape },
                "file": { "pi_bytes": file.0.median, "eta": file.0.shape },
                "start_s": start as f64 * 1e-9,
                "stop_s": stop as f64 * 1e-9,
            })
        };
        for i in 0..n as usize {
            let idx = (i as i64 * stride + offset).to_string();
            let (src, dst) = (t.src.replace("{i}", &idx), t.dst.replace("{i}", &idx));
            let ends = endpoints(cx, &key, &src, &dst, self.names, self.nodes, self.routes)?;
            let law = WebLaw { think, file, label: format!("traffic/{name}/source{i}"), start, stop };
            self.sources.push(SourceSpec {
                flow: opts.flow(&name, ends, start, None, None),
                kind: "web".into(),
                law_params: law_params(i),
                law: Arc::new(law),
            });
        }
        Ok(())
    }
}

/// The web kind's `file` table (the field is untyped because the trace kind's `file` is a path).
fn file_table(cx: &Ctx, key: &str, v: &serde_json::Value) -> Result<RawFile, ScenarioError> {
    if v.is_string() {
        return Err(cx.err(key, "the web kind's `file` is the file-length law, a table such as { pi = \"2190B\" }"));
    }
    serde_path_to_error::deserialize(v).map_err(|e| {
        let inner = e.path().to_string();
        let k = if inner == "." { key.to_string() } else { format!("{key}.{inner}") };
        cx.err(k, e.into_inner().to_string())
    })
}

/// A log-logistic law's shape: `min` is its smallest allowed value (exclusive) and `why` says why.
fn shape(cx: &Ctx, key: &str, v: Option<f64>, default: f64, min: f64, why: &str) -> Result<f64, ScenarioError> {
    let v = v.unwrap_or(default);
    if !(v.is_finite() && v > min) {
        return Err(cx.err(key, format!("must be > {min} ({why}), got {v}")));
    }
    Ok(v)
}

fn think_law(cx: &Ctx, key: &str, raw: Option<&RawThink>) -> Result<ThinkTime, ScenarioError> {
    let d = ThinkTime::PAPER;
    let none = RawThink::default();
    let r = raw.unwrap_or(&none);
    let (p_h, p_l) = match (r.p_h, r.p_l) {
        (None, None) => (d.p_h, d.p_l),
        (Some(h), None) => (h, 1.0 - h),
        (None, Some(l)) => (1.0 - l, l),
        (Some(h), Some(l)) => (h, l),
    };
    for (k, p) in [("p_h", p_h), ("p_l", p_l)] {
        if !(p.is_finite() && (0.0..=1.0).contains(&p)) {
            return Err(cx.err(format!("{key}.{k}"), format!("must be a probability in [0, 1], got {p}")));
        }
    }
    if (p_h + p_l - 1.0).abs() > 1e-9 {
        return Err(
            cx.err(format!("{key}.p_l"), format!("p_h + p_l must be 1 (a mixture's weights), got {}", p_h + p_l))
        );
    }
    let median = |k: &str, v: Option<Seconds>, default: f64| -> Result<f64, ScenarioError> {
        let s = v.map_or(default, |s| s.0);
        if !(s.is_finite() && s > 0.0) {
            return Err(cx.err(format!("{key}.{k}"), format!("must be a time > 0 (the component's median), got {s} s")));
        }
        Ok(s)
    };
    // A finite mean think time is what sets how often a source sends (and the flow estimate).
    let why = "the think time's mean is finite only for a shape above 1";
    Ok(ThinkTime {
        p_h,
        h: LogLogistic {
            median: median("pi_h", r.pi_h, d.h.median)?,
            shape: shape(cx, &format!("{key}.eta_h"), r.eta_h, d.h.shape, 1.0, why)?,
        },
        p_l,
        l: LogLogistic {
            median: median("pi_l", r.pi_l, d.l.median)?,
            shape: shape(cx, &format!("{key}.eta_l"), r.eta_l, d.l.shape, 1.0, why)?,
        },
    })
}

fn file_law(cx: &Ctx, key: &str, raw: Option<&RawFile>, packet_size: u32) -> Result<FileSize, ScenarioError> {
    let d = FileSize::PAPER;
    let none = RawFile::default();
    let r = raw.unwrap_or(&none);
    let pi = match r.pi {
        None => d.0.median,
        Some(Size(Amount::Bytes(b))) => b,
        Some(Size(Amount::Packets(p))) => p * payload(packet_size) as f64,
        Some(Size(Amount::Bdp(_))) => return Err(cx.err(format!("{key}.pi"), "'bdp' is only meaningful for buffers")),
    };
    if !(pi.is_finite() && pi > 0.0 && pi <= MAX_FILE_BYTES) {
        return Err(cx.err(
            format!("{key}.pi"),
            format!("must be a size > 0 and at most 2^53 bytes (the median file), got {pi} B"),
        ));
    }
    let eta = shape(cx, &format!("{key}.eta"), r.eta, d.0.shape, 0.0, "a log-logistic shape")?;
    Ok(FileSize(LogLogistic { median: pi, shape: eta }))
}
