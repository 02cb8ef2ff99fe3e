/* gl_egl.c - vgtrace corpus workload: OpenGL ES 2 through EGL on a 64x64 pbuffer, no window system.
 * Display: the first EGL device that initializes (EGL_EXT_device_enumeration + EGL_EXT_platform_device,
 * eglGetPlatformDisplayEXT(EGL_PLATFORM_DEVICE_EXT, ...)); if there is none, eglGetDisplay(EGL_DEFAULT_DISPLAY).
 * Clears to opaque black, draws one RGB-interpolated triangle with a trivial shader, glReadPixels, checks
 * corners (clear colour) and centre (covered), hashes the pixels (FNV-1a 64, rows as GL returns them,
 * bottom row first). With argv[1], also writes the image as PNG there (top row first).
 * Prints: INFO lines, then RESULT gl_egl ok 64x64 covered=<pixels> hash=<fnv1a64> ; exit 0, or exit 1. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <GLES2/gl2.h>
#include "wl_common.h"

#define W 64
#define H 64

static void fail(const char *msg)
{
    fprintf(stderr, "FAIL gl_egl: %s (eglGetError=0x%04x)\n", msg, (unsigned)eglGetError());
    exit(1);
}

static EGLDisplay open_display(const char **how)
{
    const char *cext = eglQueryString(EGL_NO_DISPLAY, EGL_EXTENSIONS);
    PFNEGLQUERYDEVICESEXTPROC query_devices = (PFNEGLQUERYDEVICESEXTPROC)eglGetProcAddress("eglQueryDevicesEXT");
    PFNEGLGETPLATFORMDISPLAYEXTPROC get_platform_display =
        (PFNEGLGETPLATFORMDISPLAYEXTPROC)eglGetProcAddress("eglGetPlatformDisplayEXT");
    if (cext && strstr(cext, "EGL_EXT_platform_device") && query_devices && get_platform_display) {
        EGLDeviceEXT devs[16];
        EGLint n = 0;
        if (query_devices(16, devs, &n) && n > 0) {
            for (EGLint i = 0; i < n; i++) {
                EGLDisplay d = get_platform_display(EGL_PLATFORM_DEVICE_EXT, devs[i], NULL);
                EGLint maj, min;
                if (d != EGL_NO_DISPLAY && eglInitialize(d, &maj, &min)) {
                    static char buf[64];
                    snprintf(buf, sizeof(buf), "device%d/%d", (int)i, (int)n);
                    *how = buf;
                    return d;
                }
            }
        }
    }
    EGLDisplay d = eglGetDisplay(EGL_DEFAULT_DISPLAY);
    EGLint maj, min;
    if (d != EGL_NO_DISPLAY && eglInitialize(d, &maj, &min)) { *how = "default"; return d; }
    fail("no EGL display: neither an EGL device nor the default display initialized");
    return EGL_NO_DISPLAY;
}

static GLuint compile(GLenum type, const char *src)
{
    GLuint s = glCreateShader(type);
    glShaderSource(s, 1, &src, NULL);
    glCompileShader(s);
    GLint ok = 0;
    glGetShaderiv(s, GL_COMPILE_STATUS, &ok);
    if (!ok) {
        char log[1024] = "";
        glGetShaderInfoLog(s, sizeof(log), NULL, log);
        fprintf(stderr, "FAIL gl_egl: shader compile: %s\n", log);
        exit(1);
    }
    return s;
}

int main(int argc, char **argv)
{
    const char *how = "";
    EGLDisplay dpy = open_display(&how);
    if (!eglBindAPI(EGL_OPENGL_ES_API)) fail("eglBindAPI(EGL_OPENGL_ES_API)");
    const EGLint cfg_attr[] = { EGL_SURFACE_TYPE, EGL_PBUFFER_BIT, EGL_RENDERABLE_TYPE, EGL_OPENGL_ES2_BIT,
                                EGL_RED_SIZE, 8, EGL_GREEN_SIZE, 8, EGL_BLUE_SIZE, 8, EGL_ALPHA_SIZE, 8, EGL_NONE };
    EGLConfig cfgs[64], cfg = NULL;
    EGLint ncfg = 0;
    if (!eglChooseConfig(dpy, cfg_attr, cfgs, 64, &ncfg) || ncfg == 0) fail("no RGBA8 pbuffer ES2 config");
    for (EGLint i = 0; i < ncfg && !cfg; i++) {  /* prefer exactly RGBA8888 */
        EGLint r, g, b, a;
        eglGetConfigAttrib(dpy, cfgs[i], EGL_RED_SIZE, &r); eglGetConfigAttrib(dpy, cfgs[i], EGL_GREEN_SIZE, &g);
        eglGetConfigAttrib(dpy, cfgs[i], EGL_BLUE_SIZE, &b); eglGetConfigAttrib(dpy, cfgs[i], EGL_ALPHA_SIZE, &a);
        if (r == 8 && g == 8 && b == 8 && a == 8) cfg = cfgs[i];
    }
    if (!cfg) cfg = cfgs[0];
    const EGLint pb_attr[] = { EGL_WIDTH, W, EGL_HEIGHT, H, EGL_NONE };
    EGLSurface surf = eglCreatePbufferSurface(dpy, cfg, pb_attr);
    if (surf == EGL_NO_SURFACE) fail("eglCreatePbufferSurface");
    const EGLint ctx_attr[] = { EGL_CONTEXT_CLIENT_VERSION, 2, EGL_NONE };
    EGLContext ctx = eglCreateContext(dpy, cfg, EGL_NO_CONTEXT, ctx_attr);
    if (ctx == EGL_NO_CONTEXT) fail("eglCreateContext");
    if (!eglMakeCurrent(dpy, surf, surf, ctx)) fail("eglMakeCurrent");
    printf("INFO gl_egl display=%s vendor=\"%s\" renderer=\"%s\" version=\"%s\"\n", how,
           eglQueryString(dpy, EGL_VENDOR), (const char *)glGetString(GL_RENDERER), (const char *)glGetString(GL_VERSION));

    GLuint prog = glCreateProgram();
    glAttachShader(prog, compile(GL_VERTEX_SHADER,
        "attribute vec2 pos;\nattribute vec3 col;\nvarying vec3 v;\n"
        "void main() { v = col; gl_Position = vec4(pos, 0.0, 1.0); }\n"));
    glAttachShader(prog, compile(GL_FRAGMENT_SHADER,
        "precision mediump float;\nvarying vec3 v;\nvoid main() { gl_FragColor = vec4(v, 1.0); }\n"));
    glBindAttribLocation(prog, 0, "pos");
    glBindAttribLocation(prog, 1, "col");
    glLinkProgram(prog);
    GLint ok = 0;
    glGetProgramiv(prog, GL_LINK_STATUS, &ok);
    if (!ok) fail("program link");
    static const GLfloat pos[] = { 0.0f, 0.8f, 0.8f, -0.8f, -0.8f, -0.8f };
    static const GLfloat col[] = { 1, 0, 0, 0, 1, 0, 0, 0, 1 };
    GLuint vbo[2];
    glGenBuffers(2, vbo);
    glBindBuffer(GL_ARRAY_BUFFER, vbo[0]);
    glBufferData(GL_ARRAY_BUFFER, sizeof(pos), pos, GL_STATIC_DRAW);
    glVertexAttribPointer(0, 2, GL_FLOAT, GL_FALSE, 0, 0);
    glBindBuffer(GL_ARRAY_BUFFER, vbo[1]);
    glBufferData(GL_ARRAY_BUFFER, sizeof(col), col, GL_STATIC_DRAW);
    glVertexAttribPointer(1, 3, GL_FLOAT, GL_FALSE, 0, 0);
    glEnableVertexAttribArray(0);
    glEnableVertexAttribArray(1);

    glViewport(0, 0, W, H);
    glClearColor(0.0f, 0.0f, 0.0f, 1.0f);
    glClear(GL_COLOR_BUFFER_BIT);
    glUseProgram(prog);
    glDrawArrays(GL_TRIANGLES, 0, 3);
    static unsigned char pixels[W * H * 4];
    glPixelStorei(GL_PACK_ALIGNMENT, 1);
    glReadPixels(0, 0, W, H, GL_RGBA, GL_UNSIGNED_BYTE, pixels);
    GLenum err = glGetError();
    if (err != GL_NO_ERROR) {
        fprintf(stderr, "FAIL gl_egl: GL error 0x%04x\n", (unsigned)err);
        return 1;
    }

    static const unsigned char black[4] = { 0, 0, 0, 255 };
    const int corners[4][2] = { { 0, 0 }, { W - 1, 0 }, { 0, H - 1 }, { W - 1, H - 1 } };
    for (int c = 0; c < 4; c++)
        if (memcmp(pixels + (corners[c][1] * W + corners[c][0]) * 4, black, 4) != 0) fail("corner is not the clear colour");
    const unsigned char *mid = pixels + ((H / 2) * W + W / 2) * 4;
    if (mid[3] != 255 || (mid[0] | mid[1] | mid[2]) == 0) fail("centre pixel is not covered by the triangle");
    unsigned covered = 0;
    for (int i = 0; i < W * H; i++)
        if (memcmp(pixels + i * 4, black, 4) != 0) covered++;
    if (covered < W * H / 4 || covered > W * H * 3 / 4) fail("implausible covered pixel count");
    uint64_t h = wl_fnv1a64(pixels, sizeof(pixels));
    if (argc > 1) {
        static unsigned char flipped[W * H * 4];
        for (int y = 0; y < H; y++) memcpy(flipped + y * W * 4, pixels + (H - 1 - y) * W * 4, W * 4);
        if (wl_write_png_rgba(argv[1], flipped, W, H) != 0) {
            fprintf(stderr, "FAIL gl_egl: cannot write %s\n", argv[1]);
            return 1;
        }
    }

    glDeleteBuffers(2, vbo);
    glDeleteProgram(prog);
    eglMakeCurrent(dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
    eglDestroyContext(dpy, ctx);
    eglDestroySurface(dpy, surf);
    eglTerminate(dpy);
    printf("RESULT gl_egl ok %dx%d covered=%u hash=%016llx\n", W, H, covered, (unsigned long long)h);
    return 0;
}
