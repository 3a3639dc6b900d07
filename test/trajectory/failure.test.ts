import { describe, expect, it } from 'vitest';
import { failureClassOf, failureOf, FailureType } from '../../src/trajectory/failure.js';

describe('failureOf', () => {
  it('keeps a reported type, and its class or the class the type belongs to', () => {
    expect(failureOf('x', { failureType: 'VerifierError', failureClass: 'data' })).toEqual({ failureType: 'VerifierError', failureClass: 'data' });
    expect(failureOf('x', { failureType: 'PolicyUnavailable' })).toEqual({ failureType: 'PolicyUnavailable', failureClass: 'infrastructure' });
    expect(failureOf('x', { failureType: 'ContextExhausted', failureClass: 'bogus' as 'data' })).toEqual({
      failureType: 'ContextExhausted',
      failureClass: 'data',
    });
  });

  it('derives the type from the words of the release before failure types', () => {
    const cases: [string, string][] = [
      [
        'Activity task failed: inference server http://h:1/generate rejected the request (HTTP 400): {"error":"too long"}',
        FailureType.PolicyRejectedRequest,
      ],
      ['Activity task failed: inference server http://h:1/generate unavailable: HTTP 503', FailureType.PolicyUnavailable],
      ['Activity task failed: inference server http://h:1/generate broke the protocol: no tokens', FailureType.PolicyProtocolError],
      ['Activity task failed: cannot reach Postgres at postgres://u:***@h/db: ECONNREFUSED', FailureType.DatabaseUnavailable],
      ['the prompt of run/q/0 fills the context window', FailureType.ContextExhausted],
      ['Workflow cancelled', FailureType.Cancelled],
      ['VerifierTimeout: verifying t turn 0 ran past its budget', FailureType.VerifierTimeout],
      ['Activity task failed: something new', FailureType.InternalError],
      // A known word that is not at the start says nothing about the cause.
      ['Activity task failed: the answer mentions "inference server x rejected the request"', FailureType.InternalError],
      ['NotAType: whatever', FailureType.InternalError],
    ];
    for (const [message, type] of cases) expect(failureOf(message).failureType, message).toBe(type);
    expect(failureOf('Workflow cancelled').failureClass).toBe('infrastructure');
    expect(failureOf('the prompt of x fills the context window').failureClass).toBe('data');
  });

  it("counts an unknown type as infrastructure, never as the data's fault", () => {
    expect(failureClassOf('TypeError')).toBe('infrastructure');
    expect(failureClassOf(FailureType.DatabaseRejected)).toBe('data');
  });
});
