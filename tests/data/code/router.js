'use strict';

/**
 * A small router: layers of middleware and routes, matched in order.
 */

var methods = ['get', 'post', 'put', 'delete'];

function Router(options) {
  if (!(this instanceof Router)) {
    return new Router(options);
  }
  this.options = options || {};
  this.stack = [];
}

Router.prototype.use = function (fn) {
  this.stack.push({ path: '/', handle: fn });
  return this;
};

Router.prototype.route = function route(path) {
  var layer = { path: path, handlers: {} };
  this.stack.push(layer);
  return layer;
};

methods.forEach(function (method) {
  Router.prototype[method] = function (path, handler) {
    this.route(path).handlers[method] = handler;
    return this;
  };
});

Router.prototype.handle = function handle(req, res, done) {
  var index = 0;
  var stack = this.stack;

  function next(err) {
    var layer = stack[index++];
    if (!layer) {
      return done(err);
    }
    layer.handle(req, res, next);
  }

  next();
};

exports.Router = Router;

exports.createServer = function createServer(handler) {
  var router = new Router();
  router.use(handler);
  return router;
};

module.exports.isRoute = (value) => typeof value.path === 'string';

module.exports.defaults = {
  timeout: 5000,
  onError: function (err) {
    console.error(err);
  },
  notFound(req, res) {
    res.statusCode = 404;
    res.end();
  },
};
