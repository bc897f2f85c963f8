/** The anchor of the API benchmarks: a bare Fastify JSON POST with a TypeBox schema, nothing else. */
import Fastify from 'fastify';
import { Type } from 'typebox';

const app = Fastify({ logger: false });
app.post(
  '/emitir',
  {
    schema: {
      body: Type.Object({
        tomador: Type.Object({ cnpj: Type.String(), nome: Type.String() }, { additionalProperties: true }),
        servico: Type.Object({ descricao: Type.String() }, { additionalProperties: true }),
        valores: Type.Object({ total: Type.Number(), aliquotaIss: Type.Number() }, { additionalProperties: true }),
      }),
    },
  },
  async (_request, reply) => reply.status(202).send({ queued: true, invoiceId: crypto.randomUUID(), status: 'queued' }),
);
await app.listen({ port: Number(process.env.PORT ?? 3999), host: '127.0.0.1' });
