import { expect } from 'chai';
import { ConnectionError, RequestError } from 'tedious';
import { classify } from '../src/error-mapping.js';

const entity = { schema: 'dbo', table: 'orders' };

function requestError(number: number, message: string): RequestError {
  const error = new RequestError(message, 'EREQUEST');
  error.number = number;
  return error;
}

describe('classify (SQL Server and driver errors → domain errors)', function () {
  it('falls back to a generic detail when the message is not the English one', function () {
    const outcome = classify(requestError(2627, "Violation de la contrainte PRIMARY KEY « PK_x »."), entity);
    expect(outcome).to.deep.equal({
      kind: 'mapped',
      error: { code: 'constraint_violation', detail: 'The write would duplicate a unique key of dbo.orders.' },
      number: 2627,
      driverCode: 'EREQUEST',
    });
  });

  it('treats EINVALIDSTATE (the request never left: the connection was already closed) as not sent', function () {
    expect(classify(new RequestError('Requests can only be made in the LoggedIn state, not the Final state', 'EINVALIDSTATE'), entity)).to.deep.equal({ kind: 'not_sent' });
  });

  it('maps driver codes: timeouts, refused or lost connections; a pool wait is a timeout', function () {
    const code = (e: unknown): string | undefined => {
      const c = classify(e, entity);
      return c.kind === 'mapped' ? c.error.code : c.kind;
    };
    const timeout = new Error('Knex: Timeout acquiring a connection.');
    timeout.name = 'KnexTimeoutError';
    expect(code(new ConnectionError('Failed to connect to db.internal:1433 in 15000ms', 'ETIMEOUT'))).to.equal('connection_timeout');
    expect(code(new RequestError('Timeout: Request failed to complete in 30000ms', 'ETIMEOUT'))).to.equal('connection_timeout');
    expect(code(timeout)).to.equal('connection_timeout');
    expect(code(new ConnectionError('Failed to connect to db.internal:1433 - connect ECONNREFUSED', 'ESOCKET'))).to.equal('connection_unavailable');
    expect(code(new RequestError('Connection closed before request completed.', 'ECLOSE'))).to.equal('connection_unavailable');
    expect(code(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }))).to.equal('connection_unavailable');
  });

  it('leaves anything else unmapped (a bug or an unknown failure: the caller throws)', function () {
    expect(classify(new TypeError('x is not a function'), entity)).to.deep.equal({ kind: 'unmapped', number: undefined, driverCode: undefined });
    expect(classify(requestError(229, "The INSERT permission was denied on the object 'orders'"), entity)).to.deep.equal({ kind: 'unmapped', number: 229, driverCode: 'EREQUEST' });
    expect(classify('not an error', entity)).to.deep.equal({ kind: 'unmapped', number: undefined, driverCode: undefined });
  });

  it('finds the mapped error inside nested AggregateErrors, and a deadlock anywhere', function () {
    const nested = new AggregateError([requestError(3609, 'The transaction ended in the trigger.'), new AggregateError([requestError(515, "Cannot insert the value NULL into column 'qty', table 'db.dbo.orders'; column does not allow nulls. INSERT fails.")])]);
    const outcome = classify(nested, entity);
    expect(outcome.kind === 'mapped' && outcome.error).to.deep.equal({ code: 'constraint_violation', detail: 'Column qty does not allow NULL.' });
    expect(classify(new AggregateError([requestError(1205, 'deadlocked'), requestError(3621, 'terminated')]), entity)).to.deep.equal({ kind: 'deadlock' });
  });
});
