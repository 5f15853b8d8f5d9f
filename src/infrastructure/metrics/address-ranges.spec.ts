import { ConfigError, loadConfig } from '../../config';
import { inRanges } from './address-ranges';

describe('which peers may read /metrics', () => {
  const loopback = ['127.0.0.0/8', '::1/128'];

  it('admits loopback peers by default, IPv4 seen through IPv6 included', () => {
    expect(['127.0.0.1', '127.8.9.10', '::1', '::ffff:127.0.0.1'].map((peer) => inRanges(peer, loopback))).toEqual([true, true, true, true]);
  });

  it('refuses every other peer by default', () => {
    expect(['10.0.0.5', '192.168.1.1', '::ffff:10.0.0.5', 'fe80::1', '', undefined].map((peer) => inRanges(peer, loopback))).toEqual([
      false,
      false,
      false,
      false,
      false,
      false,
    ]);
  });

  it('admits the ranges the operator lists, at their edges and no further', () => {
    const ranges = ['10.1.0.0/16', '2001:db8::/32'];
    expect(['10.1.0.0', '10.1.255.255', '10.2.0.0', '10.0.255.255', '2001:db8::7', '2001:db9::1'].map((peer) => inRanges(peer, ranges))).toEqual([
      true,
      true,
      false,
      false,
      true,
      false,
    ]);
    expect(inRanges('203.0.113.9', ['0.0.0.0/0'])).toBe(true);
  });
});

describe('metrics settings', () => {
  it('are off by default and loopback-only when on', () => {
    expect(loadConfig({}).metrics).toEqual({ enabled: false, allow: ['127.0.0.0/8', '::1/128'] });
    expect(loadConfig({ ASSAY_METRICS: '1', ASSAY_METRICS_ALLOW: '10.0.0.0/8, ::1/128' }).metrics).toEqual({ enabled: true, allow: ['10.0.0.0/8', '::1/128'] });
  });

  it('refuse what they cannot read, naming the variable', () => {
    expect(() => loadConfig({ ASSAY_METRICS: 'yes' })).toThrow(ConfigError);
    expect(() => loadConfig({ ASSAY_METRICS_ALLOW: '10.0.0.0' })).toThrow(/ASSAY_METRICS_ALLOW/);
    expect(() => loadConfig({ ASSAY_METRICS_ALLOW: '10.0.0.0/33' })).toThrow(/ASSAY_METRICS_ALLOW/);
    expect(() => loadConfig({ ASSAY_METRICS_ALLOW: '::1/129' })).toThrow(/ASSAY_METRICS_ALLOW/);
    expect(() => loadConfig({ ASSAY_WATCH_STREAMS_PER_ORG: '0' })).toThrow(/ASSAY_WATCH_STREAMS_PER_ORG/);
  });
});
